import { invalidField } from '../../errors/domainError.ts';
import { parseModelRef } from '../../llm/modelRef.ts';
import type { AgentSettings } from './agentRecord.ts';

export const MAX_TOOL_ROUNDS = 100;
export const MAX_TEMPERATURE = 2;

/**
 * The rules of an agent's settings, checked in the domain as well as by the routes' schemas (the
 * chat loop and other callers reach the domain directly). A model must name its provider
 * (`provider:model`); whether that provider is configured is the chat's business, not this one.
 */
export function checkSettings(s: AgentSettings): AgentSettings {
  const ref = parseModelRef(s.model);
  if (typeof ref === 'string') throw invalidField('model', ref);
  if (s.temperature !== null && !(s.temperature >= 0 && s.temperature <= MAX_TEMPERATURE)) {
    throw invalidField('temperature', `must be between 0 and ${MAX_TEMPERATURE}`);
  }
  // The Messages API version of the pinned Anthropic SDK refuses sampling parameters (400 on every turn).
  if (s.temperature !== null && ref.provider === 'anthropic') {
    throw invalidField('temperature', 'anthropic models take no temperature (their API refuses it): leave it out or null');
  }
  if (!Number.isInteger(s.max_tool_rounds) || s.max_tool_rounds < 1 || s.max_tool_rounds > MAX_TOOL_ROUNDS) {
    throw invalidField('max_tool_rounds', `must be a whole number from 1 to ${MAX_TOOL_ROUNDS}`);
  }
  return s;
}
