import type { ApiResponse, TestServer } from '../helpers/server.ts';

export interface UploadFile {
  name: string;
  content: string | Uint8Array;
  type?: string;
}

/**
 * POST /ingest/submit/file as a browser or curl would: multipart/form-data built by Node's own
 * FormData and Blob (undici writes the boundary and streams the parts).
 */
export async function submitFiles(
  server: TestServer,
  token: string,
  fields: Record<string, string>,
  files: UploadFile[],
  fileField = 'files',
): Promise<ApiResponse> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  // A copy: a Blob takes bytes backed by a plain ArrayBuffer (a Buffer may share a pool).
  for (const f of files) form.append(fileField, new Blob([typeof f.content === 'string' ? f.content : new Uint8Array(f.content)], { type: f.type ?? 'application/octet-stream' }), f.name);
  const res = await fetch(`${server.url}/api/v1/ingest/submit/file`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  return { status: res.status, headers: res.headers, body };
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

/** Polls GET /ingest/tasks/{id} until `until(task)` (default: finished), within `ms`. */
export async function waitTask(
  server: TestServer,
  token: string,
  id: string,
  until: (task: any) => boolean = (t) => FINISHED.has(t.status),
  ms = 60_000,
): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await server.api('GET', `/ingest/tasks/${id}`, { token });
    if (res.status !== 200) throw new Error(`GET task ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (until(res.body.data)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`task ${id} still ${res.body.data.status} after ${ms} ms: ${JSON.stringify(res.body.data)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every task finished, by POST /ingest/tasks/batch. */
export async function waitAll(server: TestServer, token: string, ids: string[], ms = 120_000): Promise<any[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await server.api('POST', '/ingest/tasks/batch', { token, body: { task_ids: ids } });
    if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
    const tasks = res.body.data.tasks as any[];
    if (tasks.length === ids.length && tasks.every((t) => FINISHED.has(t.status))) return tasks;
    if (Date.now() > deadline) throw new Error(`tasks not finished after ${ms} ms: ${JSON.stringify(tasks.map((t) => t.status))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
