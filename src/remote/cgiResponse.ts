import { PassThrough, type Readable } from 'node:stream';

export interface CgiResponse {
  status: number;
  headers: [string, string][];
  /** Everything after the header block, streamed as it arrives. */
  body: PassThrough;
}

const MAX_HEADER_BYTES = 64 * 1024;

/**
 * Splits CGI output at the first blank line: the header block becomes a status and headers
 * (`Status: 403 Forbidden` sets the code), the rest is piped on unbuffered. The body stream is
 * not ended when `output` ends: the caller ends it (a push is indexed before the reply finishes).
 */
export function readCgiResponse(output: Readable): Promise<CgiResponse> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const body = new PassThrough();
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const split = findBlankLine(head);
      if (!split) {
        if (head.length > MAX_HEADER_BYTES) fail(new Error('CGI header block too large'));
        return;
      }
      output.off('data', onData);
      output.off('end', onEnd);
      output.off('error', fail);
      const rest = head.subarray(split.bodyStart);
      if (rest.length > 0) body.write(rest);
      output.pipe(body, { end: false });
      resolve({ ...parseHeaders(head.subarray(0, split.headerEnd).toString('latin1')), body });
    };
    const onEnd = () => fail(new Error('CGI program ended before its headers'));
    const fail = (err: Error) => {
      output.off('data', onData);
      output.off('end', onEnd);
      reject(err);
    };
    output.on('data', onData);
    output.once('end', onEnd);
    output.once('error', fail);
  });
}

function findBlankLine(buf: Buffer): { headerEnd: number; bodyStart: number } | null {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { headerEnd: crlf, bodyStart: crlf + 4 };
  if (lf >= 0) return { headerEnd: lf, bodyStart: lf + 2 };
  return null;
}

function parseHeaders(text: string): { status: number; headers: [string, string][] } {
  let status = 200;
  const headers: [string, string][] = [];
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers.push([name, value]);
  }
  return { status, headers };
}
