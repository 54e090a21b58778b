/** Fetches one public URL for a `url` sync: http(s) only, bounded in time and size. */
export async function fetchUrl(url: string, maxBytes: number, timeoutMs = 15_000): Promise<{ bytes: Buffer; contentType: string | null }> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported scheme ${u.protocol}`);
  const res = await fetch(u, { redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok || !res.body) throw new Error(`GET ${url} answered ${res.status}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new Error(`${url} is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return { bytes: Buffer.concat(chunks), contentType: res.headers.get('content-type') };
}
