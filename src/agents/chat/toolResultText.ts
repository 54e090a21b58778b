/** The most of one tool result a model is given, in characters (a long file or listing would crowd out the conversation). */
export const MAX_TOOL_RESULT_CHARS = 16_000;

/**
 * A tool result as the model reads it: JSON text, cut at MAX_TOOL_RESULT_CHARS with a note that
 * says how much is missing and how to get less at a time.
 */
export function forModel(result: unknown, max = MAX_TOOL_RESULT_CHARS): { text: string; truncated: boolean } {
  const text = JSON.stringify(result) ?? 'null';
  if (text.length <= max) return { text, truncated: false };
  // Never cut a surrogate pair in two.
  let cut = max;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  const note = `\n[truncated: ${text.length - cut} of ${text.length} characters left out. Ask for less at a time: a narrower path, a JSON pointer, a smaller depth or top_k, or head/grep in a shell.]`;
  return { text: text.slice(0, cut) + note, truncated: true };
}

/** Strings longer than this are shortened in execution records (the session keeps them whole). */
const RECORD_STRING_CHARS = 500;

/** Tool-call arguments as an execution record keeps them: long strings (a written file's content) shortened. */
export function abbreviated(value: unknown): unknown {
  if (typeof value === 'string') return value.length > RECORD_STRING_CHARS ? `${value.slice(0, RECORD_STRING_CHARS)}… (${value.length} characters)` : value;
  if (Array.isArray(value)) return value.map(abbreviated);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, abbreviated(v)]));
  return value;
}
