import { invalidField } from '../../errors/domainError.ts';
import { formatModelRef, parseModelRef } from '../../llm/modelRef.ts';
import type { AgentSettings } from './agentRecord.ts';

export const MAX_TOOL_ROUNDS = 100;
export const MAX_TOOL_CALLS_PER_ROUND = 100;
export const MAX_TEMPERATURE = 2;

/**
 * The rules of an agent's settings, checked in the domain as well as by the routes' schemas (the
 * chat loop and other callers reach the domain directly). The model is kept as `provider:model`:
 * a bare name gets its provider here (its family's, else that of `defaultModel`), so what an
 * agent runs on does not change when CNS_DEFAULT_MODEL does. Whether that provider is configured
 * is the chat's business, not this one.
 */
export function checkSettings(s: AgentSettings, defaultModel: string): AgentSettings {
  const fallback = parseModelRef(defaultModel);
  const ref = parseModelRef(s.model, typeof fallback === 'string' ? undefined : fallback.provider);
  if (typeof ref === 'string') throw invalidField('model', ref);
  if (s.temperature !== null && !(s.temperature >= 0 && s.temperature <= MAX_TEMPERATURE)) {
    throw invalidField('temperature', `must be between 0 and ${MAX_TEMPERATURE}`);
  }
  // The Messages API version of the pinned Anthropic SDK refuses sampling parameters (400 on every turn).
  if (s.temperature !== null && ref.provider === 'anthropic') {
    throw invalidField('temperature', 'anthropic models take no temperature (their API refuses it): leave it out or null');
  }
  wholeNumber('max_tool_rounds', s.max_tool_rounds, MAX_TOOL_ROUNDS);
  wholeNumber('max_tool_calls_per_round', s.max_tool_calls_per_round, MAX_TOOL_CALLS_PER_ROUND);
  return { ...s, model: formatModelRef(ref) };
}

function wholeNumber(field: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 1 || value > max) throw invalidField(field, `must be a whole number from 1 to ${max}`);
}
