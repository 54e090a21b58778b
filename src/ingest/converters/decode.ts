import { open } from 'node:fs/promises';

/**
 * Text of a file's bytes: UTF-8 (a byte-order mark dropped) when the bytes are valid UTF-8,
 * else windows-1252, the usual encoding of older exports, with `fallback` true so the caller
 * can say so.
 */
export function decodeText(bytes: Uint8Array): { text: string; fallback: boolean } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), fallback: false };
  } catch {
    return { text: fixWindows1252(Buffer.from(bytes).toString('latin1')), fallback: true };
  }
}

/** Whether a file read as a stream should be decoded as UTF-8, judged by its first 64 KiB. */
export async function looksUtf8(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(65_536);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    // `stream`: a character cut at the end of the sample is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, bytesRead), { stream: true });
    return true;
  } catch {
    return false;
  } finally {
    await fh.close();
  }
}

/** 0x80-0x9f in windows-1252 (Node's TextDecoder for that label decodes them as latin-1 controls). */
const HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/** Text decoded as latin-1, corrected to windows-1252. */
export function fixWindows1252(latin1: string): string {
  return latin1.replace(/[\u0080-\u009f]/g, (c) => HIGH[c.charCodeAt(0) - 0x80]!);
}
