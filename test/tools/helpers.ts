import type { TestServer } from '../helpers/server.ts';

/** Polls `check` until it returns a truthy value or the deadline passes (then fails with the last value). */
export async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await check();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until a search tool's index is ready and caught up with the project. */
export async function indexReady(server: TestServer, token: string, toolId: string, timeoutMs = 30_000) {
  return until(
    `index of ${toolId} ready`,
    async () => {
      const r = await server.api('GET', `/tools/${toolId}/search-index`, { token });
      return r.status === 200 && r.body.data.status === 'ready' && r.body.data.lag_versions === 0 ? r.body.data : null;
    },
    timeoutMs,
  );
}

export async function search(server: TestServer, token: string, toolId: string, args: Record<string, unknown>) {
  return server.api('POST', `/tools/${toolId}/call`, { token, body: { arguments: args } });
}

/** Searches until the result list satisfies `ok` (the index follows commits asynchronously). */
export async function searchUntil(server: TestServer, token: string, toolId: string, args: Record<string, unknown>, ok: (paths: string[]) => boolean) {
  return until(`search ${JSON.stringify(args)}`, async () => {
    const r = await search(server, token, toolId, args);
    if (r.status !== 200) throw new Error(`search failed: ${r.status} ${JSON.stringify(r.body)}`);
    const paths = (r.body.data.result.results as { path: string }[]).map((x) => x.path);
    return ok(paths) ? r.body.data.result : null;
  });
}
