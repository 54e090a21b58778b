/**
 * A fake Notion API over real HTTP (node:http on 127.0.0.1, an ephemeral port) for the sync
 * connector benchmark (issue 16): the service reaches it through `CNS_NOTION_API_URL` exactly as
 * it reaches api.notion.com, so a run pays for real sockets, real JSON and real pagination.
 *
 * It answers, in Notion's wire format (API version 2022-06-28, `Authorization: Bearer`,
 * `Notion-Version`), what the Notion connector pulls with (src/platform/connectors/notion/api.ts) and
 * what connecting a token checks (src/platform/oauth/providers/notion.ts):
 *   POST /v1/search                      filter {property:'object', value}, sort, page_size, start_cursor, query
 *   GET  /v1/pages/{id}                  404 object_not_found when unknown
 *   GET  /v1/blocks/{id}                 a block, or the child_page block of a page
 *   GET  /v1/blocks/{id}/children        ?page_size&start_cursor
 *   GET  /v1/users/me                    the integration's bot user, with its workspace name
 * Databases and the write endpoints (push) are not part of the benchmark: they are answered as
 * Notion answers a URL it does not know (400 invalid_request_url), so a run that needed them fails loudly.
 *
 * Each token is its own workspace (what an integration is shared with), so one benchmark phase's
 * pages never show up in another phase's searches. The server counts requests and the time it
 * spends answering them: the benchmark subtracts that from a run's time to get the service's own.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const NOTION_VERSION = '2022-06-28';
/** Notion's largest (and default) page of list results. */
const MAX_PAGE_SIZE = 100;

type Obj = Record<string, unknown>;

const ANNOTATIONS = { bold: false, italic: false, strikethrough: false, underline: false, code: false, color: 'default' };

/** Rich text as Notion answers it: with annotations, plain_text and href. */
export function richText(content: string, annotations: Partial<typeof ANNOTATIONS> = {}, link: string | null = null): Obj {
  return { type: 'text', text: { content, link: link ? { url: link } : null }, annotations: { ...ANNOTATIONS, ...annotations }, plain_text: content, href: link };
}

/** 32 hexadecimal digits, with or without dashes, in Notion's dashed form; anything else as is (it matches nothing). */
function normalizeId(id: string): string {
  const hex = id.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return id;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Notion rounds `last_edited_time` down to the minute. */
function minuteOf(ms: number): string {
  return new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
}

/** A small deterministic generator (mulberry32): the same seed gives the same workspace. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'account agenda alpha archive audit backlog baseline batch board budget cache calendar ' +
  'change client cluster commit contract cursor customer deadline deploy design draft ' +
  'estimate feature feedback filter forecast goal handoff index insight invoice issue ' +
  'launch ledger metric migration milestone module notes onboarding outline owner partner ' +
  'pipeline policy priority process project quarter query release report review roadmap ' +
  'schedule scope service sprint status summary support team template ticket timeline ' +
  'update vendor version workflow'
).split(' ');

export class NotionError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const notFound = (what: string, id: string) =>
  new NotionError(404, 'object_not_found', `Could not find ${what} with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`);
const invalid = (message: string) => new NotionError(400, 'validation_error', message);

export interface Tree {
  root: string;
  /** Every page of the tree, the root first. */
  pages: string[];
  /** The pages with no sub-pages. */
  leaves: string[];
}

/**
 * What one integration token sees: pages with their blocks, generated "Notion-sized" (about 27
 * blocks and 3-5 KB of text a page: headings, paragraphs with bold, italic, code and links,
 * bulleted and numbered lists, to-dos, a code block, a quote, a divider).
 */
export class NotionWorkspace {
  readonly pages = new Map<string, Obj>();
  /** A page's or block's direct children, in order (a page's sub-pages as child_page blocks, last). */
  readonly children = new Map<string, Obj[]>();
  /** Every block by id, child_page blocks included (GET /v1/blocks/{id}). */
  private readonly blocks = new Map<string, Obj>();
  /** Pages in search order (newest edit first), rebuilt after an edit. */
  private ordered: Obj[] | null = null;
  private position = new Map<string, number>();
  /** Generated pages get edit times going back a minute each from a day ago: older than any run, spread out like a real workspace's. */
  private clock = Date.now() - 24 * 3_600_000;
  private readonly random: () => number;
  readonly bot = { object: 'user', id: randomUUID(), name: 'CNS bench', avatar_url: null, type: 'bot', bot: { owner: { type: 'workspace', workspace: true }, workspace_name: '' } };

  constructor(
    readonly token: string,
    readonly name: string,
    seed = 1,
  ) {
    this.random = prng(seed);
    this.bot.bot.workspace_name = name;
  }

  /**
   * A root page (in the workspace) with `pages - 1` pages under it: directly when they fit in
   * `fanout`, else in sections of up to `fanout` pages each (10,000 pages: 99 sections of 100),
   * as a large wiki is laid out. Every `nestedEvery`-th page has a bullet with two nested bullets
   * (one more blocks call to read it); 0: none.
   */
  addTree(o: { title: string; pages: number; fanout?: number; nestedEvery?: number }): Tree {
    const fanout = o.fanout ?? 100;
    const nestedEvery = o.nestedEvery ?? 3;
    let made = 0;
    const add = (title: string, parent: Obj) => this.addPage(title, parent, nestedEvery > 0 && made++ % nestedEvery === 0);
    const root = add(o.title, { type: 'workspace', workspace: true });
    const tree: Tree = { root, pages: [root], leaves: [] };
    const below = Math.max(0, o.pages - 1);
    if (below <= fanout) {
      for (let i = 1; i <= below; i++) tree.pages.push(add(this.title(i), { type: 'page_id', page_id: root }));
      tree.leaves.push(...(below ? tree.pages.slice(1) : [root]));
      return tree;
    }
    const sections: string[] = [];
    const count = Math.ceil(below / (fanout + 1));
    for (let s = 1; s <= count; s++) sections.push(add(`Section ${s} ${this.word()}`, { type: 'page_id', page_id: root }));
    tree.pages.push(...sections);
    for (let i = 0; i < below - count; i++) {
      const page = add(this.title(i + 1), { type: 'page_id', page_id: sections[i % count] });
      tree.pages.push(page);
      tree.leaves.push(page);
    }
    return tree;
  }

  /** An edit in Notion: a paragraph of the page gets new text, and the page a new (minute-rounded) `last_edited_time`. */
  editPage(id: string, now = Date.now()): void {
    const page = this.pages.get(id);
    if (!page) throw new Error(`fake Notion: no page ${id}`);
    const edited = minuteOf(now);
    const paragraph = this.children.get(id)!.find((b) => b.type === 'paragraph');
    if (paragraph) {
      paragraph.paragraph = { rich_text: [richText(`Edited at ${new Date(now).toISOString()}: ${this.sentence(12)}`)], color: 'default' };
      paragraph.last_edited_time = edited;
    }
    page.last_edited_time = edited;
    this.ordered = null;
  }

  /**
   * The blocks calls the connector makes to read a page's content (NotionApi.blockTree): one per
   * 100 children of the page and of every block with children below it, not entering child pages.
   */
  contentCalls(id: string): number {
    const kids = this.children.get(id) ?? [];
    let calls = Math.max(1, Math.ceil(kids.length / MAX_PAGE_SIZE));
    for (const b of kids) if (b.has_children && b.type !== 'child_page' && b.type !== 'child_database') calls += this.contentCalls(String(b.id));
    return calls;
  }

  // ------------------------------------------------------------ answers

  search(body: Obj): Obj {
    const filter = body.filter as { property?: unknown; value?: unknown } | undefined;
    if (filter !== undefined && (filter.property !== 'object' || (filter.value !== 'page' && filter.value !== 'database'))) {
      throw invalid('body failed validation: body.filter.value should be `"page"` or `"database"`, and body.filter.property should be `"object"`.');
    }
    const sort = body.sort as { direction?: unknown; timestamp?: unknown } | undefined;
    if (sort !== undefined && (sort.timestamp !== 'last_edited_time' || (sort.direction !== 'ascending' && sort.direction !== 'descending'))) {
      throw invalid('body failed validation: body.sort.timestamp should be `"last_edited_time"`, and body.sort.direction should be `"ascending"` or `"descending"`.');
    }
    // No databases here: a search for them finds none.
    let all = filter?.value === 'database' ? [] : this.searchOrder();
    if (sort?.direction === 'ascending') all = [...all].reverse();
    if (typeof body.query === 'string' && body.query !== '') {
      const q = body.query.toLowerCase();
      all = all.filter((p) => titleOf(p).toLowerCase().includes(q));
    }
    const unfiltered = all === this.ordered;
    return this.list(all, body.start_cursor, body.page_size, 'page_or_database', unfiltered ? this.position : undefined);
  }

  page(id: string): Obj {
    const page = this.pages.get(normalizeId(id));
    if (!page) throw notFound('page', id);
    return page;
  }

  block(id: string): Obj {
    const block = this.blocks.get(normalizeId(id));
    if (!block) throw notFound('block', id);
    return block;
  }

  blockChildren(id: string, query: URLSearchParams): Obj {
    const kids = this.children.get(normalizeId(id));
    if (!kids) throw notFound('block', id);
    const size = query.get('page_size');
    return this.list(kids, query.get('start_cursor') ?? undefined, size === null ? undefined : Number(size), 'block');
  }

  /** One answer page of a list; the cursor is the id of the next result, as opaque to the client as Notion's. */
  private list(all: Obj[], cursor: unknown, pageSize: unknown, type: string, position?: Map<string, number>): Obj {
    const size = pageSize === undefined ? MAX_PAGE_SIZE : Number(pageSize);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) throw invalid(`page_size should be a number between 1 and ${MAX_PAGE_SIZE}, instead was \`${String(pageSize)}\`.`);
    let start = 0;
    if (cursor !== undefined && cursor !== null) {
      start = position?.get(String(cursor)) ?? all.findIndex((x) => x.id === cursor);
      if (start < 0) throw invalid('start_cursor provided is invalid: ' + String(cursor));
    }
    const results = all.slice(start, start + size);
    const next = all[start + size];
    return { object: 'list', results, next_cursor: next ? next.id : null, has_more: !!next, type, [type]: {}, request_id: randomUUID() };
  }

  private searchOrder(): Obj[] {
    if (!this.ordered) {
      this.ordered = [...this.pages.values()]
        .filter((p) => !p.in_trash)
        .sort((a, b) => String(b.last_edited_time).localeCompare(String(a.last_edited_time)) || String(a.id).localeCompare(String(b.id)));
      this.position = new Map(this.ordered.map((p, i) => [String(p.id), i]));
    }
    return this.ordered;
  }

  // ------------------------------------------------------------ generation

  private addPage(title: string, parent: Obj, nested: boolean): string {
    const id = randomUUID();
    const edited = minuteOf(this.clock);
    this.clock -= 60_000;
    this.pages.set(id, {
      object: 'page',
      id,
      created_time: minuteOf(this.clock - 30 * 86_400_000),
      last_edited_time: edited,
      created_by: { object: 'user', id: this.bot.id },
      last_edited_by: { object: 'user', id: this.bot.id },
      cover: null,
      icon: null,
      parent,
      archived: false,
      in_trash: false,
      properties: { title: { id: 'title', type: 'title', title: [richText(title)] } },
      url: `https://www.notion.so/${title.replace(/\W+/g, '-')}-${id.replace(/-/g, '')}`,
      public_url: null,
    });
    this.ordered = null;
    this.children.set(id, this.content(id, edited, nested));
    const parentId = (parent.page_id ?? parent.block_id) as string | undefined;
    if (parentId) this.attach(parentId, this.makeBlock('child_page', { title }, parentId, edited, false, id));
    return id;
  }

  /** About 27 blocks, 3-5 KB of text. */
  private content(page: string, edited: string, nested: boolean): Obj[] {
    const b = (type: string, payload: Obj, hasChildren = false) => this.makeBlock(type, payload, page, edited, hasChildren);
    const rt = (words: number) => ({ rich_text: [richText(this.sentence(words))], color: 'default' });
    const blocks: Obj[] = [
      b('heading_2', { ...rt(4), is_toggleable: false }),
      b('paragraph', { rich_text: this.styledText(), color: 'default' }),
      b('paragraph', { rich_text: this.styledText(), color: 'default' }),
      b('paragraph', rt(50)),
      b('heading_3', { ...rt(3), is_toggleable: false }),
    ];
    for (let i = 0; i < 5; i++) blocks.push(b('bulleted_list_item', rt(12)));
    if (nested) {
      const parent = b('bulleted_list_item', rt(10), true);
      blocks.push(parent);
      this.children.set(String(parent.id), [0, 1].map(() => this.makeBlock('bulleted_list_item', rt(9), String(parent.id), edited, false)));
      for (const kid of this.children.get(String(parent.id))!) this.blocks.set(String(kid.id), kid);
    }
    for (let i = 0; i < 4; i++) blocks.push(b('numbered_list_item', rt(12)));
    blocks.push(b('heading_3', { ...rt(2), is_toggleable: false }));
    for (let i = 0; i < 4; i++) blocks.push(b('to_do', { ...rt(9), checked: i % 2 === 0 }));
    const code = Array.from({ length: 8 }, (_, i) => `const ${this.word()}${i} = await ${this.word()}.${this.word()}(${i});`).join('\n');
    blocks.push(b('code', { rich_text: [richText(code)], caption: [], language: 'typescript' }));
    blocks.push(b('quote', rt(20)));
    blocks.push(b('divider', {}));
    blocks.push(b('heading_2', { ...rt(3), is_toggleable: false }));
    blocks.push(b('paragraph', { rich_text: this.styledText(), color: 'default' }));
    blocks.push(b('paragraph', rt(45)));
    blocks.push(b('paragraph', rt(30)));
    for (const block of blocks) this.blocks.set(String(block.id), block);
    return blocks;
  }

  private makeBlock(type: string, payload: Obj, parent: string, edited: string, hasChildren: boolean, id: string = randomUUID()): Obj {
    const parentRef = this.pages.has(parent) ? { type: 'page_id', page_id: parent } : { type: 'block_id', block_id: parent };
    return {
      object: 'block',
      id,
      parent: parentRef,
      created_time: edited,
      last_edited_time: edited,
      created_by: { object: 'user', id: this.bot.id },
      last_edited_by: { object: 'user', id: this.bot.id },
      has_children: hasChildren,
      archived: false,
      in_trash: false,
      type,
      [type]: payload,
    };
  }

  private attach(parent: string, block: Obj): void {
    this.children.get(parent)!.push(block);
    this.blocks.set(String(block.id), block);
  }

  /** A paragraph of several sentences with bold, italic, inline code and a link among them. */
  private styledText(): Obj[] {
    return [
      richText(this.sentence(30) + ' '),
      richText(this.sentence(4), { bold: true }),
      richText(' ' + this.sentence(18) + ' '),
      richText(this.word(), { code: true }),
      richText(' ' + this.sentence(12) + ' '),
      richText(this.sentence(3), { italic: true }),
      richText(' see '),
      richText(`the ${this.word()} guide`, {}, `https://example.com/${this.word()}`),
      richText('. ' + this.sentence(14)),
    ];
  }

  private title(i: number): string {
    const w = this.word();
    return `${w[0]!.toUpperCase()}${w.slice(1)} ${this.word()} ${i}`;
  }

  private word(): string {
    return WORDS[Math.floor(this.random() * WORDS.length)]!;
  }

  private sentence(words: number): string {
    const s = Array.from({ length: words }, () => this.word()).join(' ');
    return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
  }
}

function titleOf(page: Obj): string {
  for (const p of Object.values(page.properties as Record<string, Obj>)) {
    if (p.type === 'title') return (p.title as { plain_text: string }[]).map((t) => t.plain_text).join('');
  }
  return '';
}

export interface FakeStats {
  requests: number;
  /** TCP connections opened to it: far fewer than requests when the client keeps them alive. */
  connections: number;
  /** Time spent from a request's arrival to its answer handed to the socket, summed. */
  handlingMs: number;
  /** Requests by route (`GET /v1/blocks/{id}/children`), answered with an error or not. */
  byRoute: Record<string, number>;
  /** Answers with status 400 or more, by `status code`. */
  errors: Record<string, number>;
}

export interface NotionServer {
  /** `http://127.0.0.1:<port>`: the value of CNS_NOTION_API_URL. */
  url: string;
  addWorkspace(token: string, name: string, seed?: number): NotionWorkspace;
  stats(): FakeStats;
  resetStats(): void;
  close(): Promise<void>;
}

export async function startNotionServer(): Promise<NotionServer> {
  const workspaces = new Map<string, NotionWorkspace>();
  let stats: FakeStats = { requests: 0, connections: 0, handlingMs: 0, byRoute: {}, errors: {} };

  const route = (method: string, path: string): { key: string; answer: (ws: NotionWorkspace, body: Obj, query: URLSearchParams) => Obj } | null => {
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/search') return { key: 'POST /v1/search', answer: (ws, body) => ws.search(body) };
    if (method === 'GET' && path === '/v1/users/me') return { key: 'GET /v1/users/me', answer: (ws) => ({ ...ws.bot, request_id: randomUUID() }) };
    if (method === 'GET' && (m = /^\/v1\/pages\/([\w-]+)$/.exec(path))) {
      const id = m[1]!;
      return { key: 'GET /v1/pages/{id}', answer: (ws) => ws.page(id) };
    }
    if (method === 'GET' && (m = /^\/v1\/blocks\/([\w-]+)\/children$/.exec(path))) {
      const id = m[1]!;
      return { key: 'GET /v1/blocks/{id}/children', answer: (ws, _b, query) => ws.blockChildren(id, query) };
    }
    if (method === 'GET' && (m = /^\/v1\/blocks\/([\w-]+)$/.exec(path))) {
      const id = m[1]!;
      return { key: 'GET /v1/blocks/{id}', answer: (ws) => ws.block(id) };
    }
    return null;
  };

  const handle = (req: IncomingMessage, raw: string): [number, Obj, string] => {
    const url = new URL(req.url ?? '/', 'http://notion.invalid');
    const found = route(req.method ?? 'GET', url.pathname);
    const key = found?.key ?? `${req.method} (unknown)`;
    try {
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      const ws = auth ? workspaces.get(auth[1]!) : undefined;
      if (!ws) throw new NotionError(401, 'unauthorized', 'API token is invalid.');
      const version = req.headers['notion-version'];
      if (version !== NOTION_VERSION) {
        throw new NotionError(400, 'missing_version', `Notion-Version header failed validation: Notion-Version should be \`"${NOTION_VERSION}"\` here, instead was \`${version === undefined ? 'undefined' : `"${version}"`}\`.`);
      }
      if (!found) throw new NotionError(400, 'invalid_request_url', 'Invalid request URL.');
      let body: Obj = {};
      if (raw !== '') {
        try {
          body = JSON.parse(raw) as Obj;
        } catch {
          throw new NotionError(400, 'invalid_json', 'Error parsing JSON body.');
        }
      }
      return [200, found.answer(ws, body, url.searchParams), key];
    } catch (err) {
      if (!(err instanceof NotionError)) throw err;
      return [err.status, { object: 'error', status: err.status, code: err.code, message: err.message, request_id: randomUUID() }, key];
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let status: number;
      let payload: string;
      let key: string;
      try {
        let answer: Obj;
        [status, answer, key] = handle(req, Buffer.concat(chunks).toString('utf8'));
        payload = JSON.stringify(answer);
      } catch (err) {
        // A fault of the fake itself: answered as Notion's internal error, and loud on stderr.
        console.error('fake Notion:', err);
        [status, key] = [500, `${req.method} (fault)`];
        payload = JSON.stringify({ object: 'error', status: 500, code: 'internal_server_error', message: String(err) });
      }
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
      stats.requests++;
      stats.byRoute[key] = (stats.byRoute[key] ?? 0) + 1;
      if (status >= 400) {
        const code = `${status} ${(JSON.parse(payload) as { code?: string }).code ?? ''}`;
        stats.errors[code] = (stats.errors[code] ?? 0) + 1;
      }
      stats.handlingMs += performance.now() - started;
    });
  });
  server.on('connection', () => stats.connections++);
  // Keep connections open longer than a client's idle pool does, so a reused socket is never closed under a request.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    addWorkspace(token, name, seed) {
      const ws = new NotionWorkspace(token, name, seed);
      workspaces.set(token, ws);
      return ws;
    },
    stats: () => ({ ...stats, byRoute: { ...stats.byRoute }, errors: { ...stats.errors } }),
    resetStats() {
      stats = { requests: 0, connections: 0, handlingMs: 0, byRoute: {}, errors: {} };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
