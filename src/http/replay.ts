import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

/** A body already read, as a request a parser can read again (same headers, same bytes). */
export function replayOf(req: IncomingMessage, body: Buffer): IncomingMessage {
  return Object.assign(Readable.from([body]), { headers: req.headers }) as unknown as IncomingMessage;
}
