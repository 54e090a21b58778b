/** The most of a request head the primary reads before routing (the request line is what it needs). */
export const MAX_HEAD_BYTES = 16 * 1024;

export interface RequestLine {
  method: string;
  path: string;
  query: string;
}

/**
 * The request line of the bytes read so far: null while it is incomplete. The primary never
 * reads further than the first line ends (and never the body): the worker parses the request.
 */
export function requestLineOf(head: Buffer): RequestLine | null | 'invalid' {
  const end = head.indexOf('\r\n');
  if (end < 0) return head.length >= MAX_HEAD_BYTES ? 'invalid' : null;
  const m = /^([A-Z]{1,16}) (\S+) HTTP\/\d\.\d$/.exec(head.subarray(0, end).toString('latin1'));
  if (!m) return 'invalid';
  const target = m[2]!;
  const q = target.indexOf('?');
  return { method: m[1]!, path: q < 0 ? target : target.slice(0, q), query: q < 0 ? '' : target.slice(q + 1) };
}
