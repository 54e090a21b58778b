/**
 * Reads a Server-Sent Events body as it arrives and hands each event's data to `onData` (the
 * `data:` lines of one event joined by newlines). Comment lines (`: keep-alive`) and the other
 * fields are skipped: the agent chat sends only `data:` lines. Resolves when the stream ends;
 * rejects when it is aborted or breaks.
 */
export async function readSse(body: NonNullable<Response['body']>, onData: (data: string) => void): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const data = dataOf(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (data !== null) onData(data);
    }
  }
  // A last event without its blank line still counts.
  const data = dataOf(buffer);
  if (data !== null) onData(data);
}

function dataOf(block: string): string | null {
  let data: string | null = null;
  for (const line of block.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(5).replace(/^ /, '');
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}
