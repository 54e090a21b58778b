/** What a fake API records of a request it answered (nock hands its reply function a fetch Request). */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** The JSON body, or null when there was none. */
  body: unknown;
}

export async function recordRequest(req: Request): Promise<RecordedRequest> {
  const url = new URL(req.url);
  const text = await req.text();
  return {
    method: req.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: Object.fromEntries(req.headers),
    body: text === '' ? null : JSON.parse(text),
  };
}
