import { request, type Agent } from 'node:http';
import { Readable } from 'node:stream';

/**
 * A `fetch` whose requests go over `pick()`'s connection (a keep-alive agent bound to one worker,
 * or false for a fresh one): lets clients built on fetch (the MCP SDK, multipart uploads, SSE
 * readers) talk to a chosen worker. The answer's body streams as it arrives.
 */
export function fetchVia(pick: (method: string) => Agent | false): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    let payload: Buffer | undefined;
    if (init.body !== undefined && init.body !== null) {
      // Serialized the way fetch would (a FormData gets its boundary in the content type).
      const encoded = new Response(init.body as ConstructorParameters<typeof Response>[0]);
      payload = Buffer.from(await encoded.arrayBuffer());
      const type = encoded.headers.get('content-type');
      if (type && !headers.has('content-type')) headers.set('content-type', type);
      headers.set('content-length', String(payload.length));
    }
    return new Promise<Response>((resolve, reject) => {
      const req = request(url, { method, agent: pick(method), headers: Object.fromEntries(headers) }, (res) => {
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) out.append(k, one);
        const status = res.statusCode ?? 0;
        const empty = status === 204 || status === 205 || status === 304 || method === 'HEAD';
        if (empty) res.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: out }));
      });
      req.on('error', reject);
      const abort = () => req.destroy(new DOMException('aborted', 'AbortError'));
      init.signal?.addEventListener('abort', abort, { once: true });
      // One signal may serve many requests (the MCP client's): each lets go of it when done.
      req.once('close', () => init.signal?.removeEventListener('abort', abort));
      req.end(payload);
    });
  }) as typeof fetch;
}
