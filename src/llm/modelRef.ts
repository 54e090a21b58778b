/** A model as agents and chats name it: `provider:model`, e.g. `openai:gpt-4.1-mini`, `ollama:llama3.1:8b`. */
export interface ModelRef {
  provider: string;
  model: string;
}

const PROVIDER = /^[a-z0-9][a-z0-9_-]*$/;
const MAX_LENGTH = 200;

/**
 * The provider of a bare model name (one without `provider:`), by the name's family. A bare name
 * of no family here goes to the default provider (that of CNS_DEFAULT_MODEL). `o` and a digit are
 * OpenAI's reasoning models (o1, o3-mini, o4-mini), not any name starting with `o`.
 */
const FAMILIES: readonly { name: RegExp; provider: string }[] = [
  { name: /^claude-/, provider: 'anthropic' },
  { name: /^(gpt-|chatgpt-|o\d)/, provider: 'openai' },
];

/**
 * The provider and the provider's own model id, or why the string is not a model reference (a
 * message fit for a 422). Only the first `:` separates: model ids may hold more (Ollama tags). A
 * name without `:` is a bare model id: its provider comes from its family (FAMILIES), else it is
 * `defaultProvider`; without one, a bare name of no family is refused.
 */
export function parseModelRef(ref: string, defaultProvider?: string): ModelRef | string {
  if (ref.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`;
  const colon = ref.indexOf(':');
  if (colon < 0) return bareModel(ref, defaultProvider);
  const provider = ref.slice(0, colon);
  const model = ref.slice(colon + 1);
  if (provider === '' || model === '') return 'must be provider:model with neither part empty (e.g. openai:gpt-4.1-mini)';
  if (!PROVIDER.test(provider)) {
    return `the provider prefix must be lowercase letters, digits, _ or - (e.g. openai, anthropic, ollama); a model id holding ":" needs its provider first (e.g. ollama:${ref})`;
  }
  if (/\s/.test(model)) return 'the model id must not contain spaces';
  return { provider, model };
}

export const formatModelRef = (ref: ModelRef): string => `${ref.provider}:${ref.model}`;

function bareModel(model: string, defaultProvider: string | undefined): ModelRef | string {
  if (model === '') return 'must not be empty';
  if (/\s/.test(model)) return 'the model id must not contain spaces';
  const provider = FAMILIES.find((f) => f.name.test(model))?.provider ?? defaultProvider;
  if (provider === undefined) return `must name its provider, as provider:model (e.g. openai:${model})`;
  return { provider, model };
}
