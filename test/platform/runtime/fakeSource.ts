import nock from 'nock';
import { recordRequest } from '../../helpers/recordedRequest.ts';
import { githubConnector } from '../../../src/platform/connectors/github.ts';
import type { PlatformConnector, PushOutcome, SourceChange } from '../../../src/platform/runtime/connector.ts';

export const SOURCE = 'https://source.test';

export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
}

interface Item {
  path: string;
  content: string;
  version: number;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/**
 * A small source platform on nock: items with versions and a change log read by sequence
 * number (`GET /changes?since=&limit=`), and writes (`PATCH|POST|DELETE /items`). The runtime
 * tests drive the runtime through it; the real platforms have their own tests.
 */
export class FakeSource {
  readonly items = new Map<string, Item>();
  readonly seen: SeenRequest[] = [];
  /** Answers given instead of the real one, first come first served. */
  readonly interrupts: Answer[] = [];
  private readonly log: { seq: number; id: string }[] = [];
  private seq = 0;
  private changeRequests = 0;
  private readonly holds = new Map<number, { reached: () => void; released: Promise<void> }>();
  pageSize = 2;

  /**
   * Holds the `n`-th `GET /changes` request (counted from 1 across runs) until `release`:
   * `reached` settles once it has arrived, so a test acts between two pages of one run.
   */
  holdChanges(n: number): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((r) => (reached = r));
    const released = new Promise<void>((r) => (release = r));
    this.holds.set(n, { reached, released });
    return { reached: arrived, release };
  }

  put(id: string, path: string, content: string): void {
    const version = (this.items.get(id)?.version ?? 0) + 1;
    this.items.set(id, { path, content, version });
    this.log.push({ seq: ++this.seq, id });
  }

  remove(id: string): void {
    this.items.delete(id);
    this.log.push({ seq: ++this.seq, id });
  }

  intercept(): nock.Scope {
    const handle = async (req: Request): Promise<nock.ReplyFnResult> => {
      const seen = (await recordRequest(req)) as SeenRequest;
      this.seen.push(seen);
      if (seen.method === 'GET' && seen.path === '/changes') {
        const hold = this.holds.get(++this.changeRequests);
        if (hold) {
          hold.reached();
          await hold.released;
        }
      }
      const a = this.interrupts.shift() ?? this.answer(seen);
      return [a.status, JSON.stringify(a.body), { 'content-type': 'application/json', ...a.headers }];
    };
    const scope = nock(SOURCE).persist();
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) scope.intercept(() => true, method).query(true).reply(handle);
    return scope;
  }

  private answer(r: SeenRequest): Answer {
    if (r.method === 'GET' && r.path === '/changes') {
      const since = Number(r.query.since ?? 0);
      const after = this.log.filter((e) => e.seq > since);
      const page = after.slice(0, this.pageSize);
      // The last change of each item wins: an item changed twice is one change.
      const changes = page.map((e) => {
        const item = this.items.get(e.id);
        return item ? { id: e.id, ...item } : { id: e.id, deleted: true };
      });
      return { status: 200, body: { changes, cursor: page.length ? page[page.length - 1]!.seq : since, has_more: after.length > page.length } };
    }
    const m = /^\/items\/([^/]+)$/.exec(r.path);
    if (r.method === 'PATCH' && m) {
      const item = this.items.get(m[1]!);
      if (!item) return { status: 404, body: { message: 'no such item' } };
      this.put(m[1]!, item.path, String(r.body!.content));
      return { status: 200, body: { id: m[1], version: this.items.get(m[1]!)!.version } };
    }
    if (r.method === 'POST' && r.path === '/items') {
      const id = `new-${this.items.size + 1}`;
      this.put(id, String(r.body!.path), String(r.body!.content));
      return { status: 201, body: { id, version: 1 } };
    }
    if (r.method === 'DELETE' && m) {
      this.remove(m[1]!);
      return { status: 204, body: {} };
    }
    return { status: 404, body: { message: 'not found' } };
  }
}

/**
 * A connector for FakeSource, registered under the provider id `github` so that it uses the
 * real GitHub token connection (POST /oauth/github/token) for its credential.
 */
export const fakeConnector: PlatformConnector = {
  spec: {
    ...githubConnector.spec,
    capabilities: { pull: true, push: { create: true, update: true, delete: true }, incremental: true, webhooks: true },
    sync_modes: ['manual', 'interval', 'webhook'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder.' },
      { name: 'label', type: 'string', required: false, description: 'A free label.' },
    ],
  },
  authHeaders: (c) => ({ authorization: `Bearer ${c.accessToken}` }),
  async *pull(ctx, cursor) {
    let since = cursor ?? '0';
    for (;;) {
      const res = await ctx.http.request({ url: `${SOURCE}/changes`, query: { since } });
      const body = res.json<{ changes: ({ id: string; deleted: true } | ({ id: string } & Item))[]; cursor: number; has_more: boolean }>();
      const changes: SourceChange[] = body.changes.map((c) =>
        'deleted' in c
          ? { kind: 'delete', sourceId: c.id }
          : { kind: 'upsert', item: { sourceId: c.id, path: c.path, type: 'markdown', content: c.content, sourceVersion: String(c.version) } },
      );
      since = String(body.cursor);
      yield { changes, cursor: since };
      if (!body.has_more) return;
    }
  },
  async push(ctx, changes) {
    const out: PushOutcome[] = [];
    for (const c of changes) {
      if (c.kind === 'update') {
        const res = await ctx.http.request({ method: 'PATCH', url: `${SOURCE}/items/${c.sourceId}`, json: { content: c.content }, accept: [404] });
        out.push(res.status === 404 ? { ok: false, message: 'gone at the source' } : { ok: true, sourceId: c.sourceId, sourceVersion: String(res.json<{ version: number }>().version) });
      } else if (c.kind === 'create') {
        const res = await ctx.http.request({ method: 'POST', url: `${SOURCE}/items`, json: { path: c.path, content: c.content } });
        const b = res.json<{ id: string; version: number }>();
        out.push({ ok: true, sourceId: b.id, sourceVersion: String(b.version) });
      } else {
        await ctx.http.request({ method: 'DELETE', url: `${SOURCE}/items/${c.sourceId}` });
        out.push({ ok: true, sourceId: c.sourceId, sourceVersion: 'deleted' });
      }
    }
    return out;
  },
};
