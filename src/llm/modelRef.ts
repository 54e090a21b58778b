/** A model as agents and chats name it: `provider:model`, e.g. `openai:gpt-4.1-mini`, `ollama:llama3.1:8b`. */
export interface ModelRef {
  provider: string;
  model: string;
}

const PROVIDER = /^[a-z0-9][a-z0-9_-]*$/;
const MAX_LENGTH = 200;

/**
 * The provider and the provider's own model id, or why the string is not a model reference (a
 * message fit for a 422). Only the first `:` separates: model ids may hold more (Ollama tags).
 */
export function parseModelRef(ref: string): ModelRef | string {
  if (ref.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`;
  const colon = ref.indexOf(':');
  if (colon < 0) return 'must name its provider, as provider:model (e.g. openai:gpt-4.1-mini)';
  const provider = ref.slice(0, colon);
  const model = ref.slice(colon + 1);
  if (provider === '' || model === '') return 'must be provider:model with neither part empty (e.g. openai:gpt-4.1-mini)';
  if (!PROVIDER.test(provider)) return 'the provider prefix must be lowercase letters, digits, _ or - (e.g. openai, anthropic, ollama)';
  if (/\s/.test(model)) return 'the model id must not contain spaces';
  return { provider, model };
}
