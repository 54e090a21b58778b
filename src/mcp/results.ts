import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { asDomainError } from '../errors/domainError.ts';
import type { Logger } from '../logging/logger.ts';

/**
 * A tool's answer: the JSON as text (what every client shows the model) and the same value as
 * `structuredContent` (what clients that read structured results use).
 */
export function toolResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/**
 * A refused or failed call is a tool error (`isError`), not a protocol error, so the model reads
 * why and can correct itself: the API's error code and sentence, with the details. Anything
 * unexpected is logged and says only that it failed.
 */
export function toolError(err: unknown, logger: Logger, tool: string): CallToolResult {
  const known = asDomainError(err);
  const error = known
    ? { code: known.code, message: known.message, details: known.details }
    : { code: 'INTERNAL_ERROR', message: 'Something went wrong on our side; the server log has the details.', details: null };
  if (!known) logger.error({ err, tool }, 'MCP tool call failed');
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { error } };
}

/** An error message of its own, for refusals decided before a tool runs. */
export function refusal(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { error: { code, message, details: null } } };
}
