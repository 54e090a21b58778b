import type { ToolCallRequest } from './provider.ts';

/**
 * A tool call's arguments as the model streamed them (a JSON text), parsed. No arguments at all
 * is an empty object; anything that is not a JSON object becomes `{}` plus a short reason, which
 * the loop reports back to the model instead of running the tool on a guess.
 */
export function parseToolArguments(raw: string): Pick<ToolCallRequest, 'arguments' | 'argumentsError'> {
  if (raw.trim() === '') return { arguments: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    return { arguments: {}, argumentsError: `the arguments are not valid JSON (${(e as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { arguments: {}, argumentsError: `the arguments must be a JSON object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}` };
  }
  return { arguments: value as Record<string, unknown> };
}
