import type { Actor, ContentStore, NodeInfo, NodeRef, TreeNode, WritableNodeType, WriteResult } from '../../content/contentStore.ts';
import { ConflictError, decodeContent, NotFoundError, ValidationError } from '../../content/contentStore.ts';
import type { PreparedMutation } from '../../content/mutations.ts';
import { baseName, isTrashPath, joinPath, mimeTypeFor, normalizePath, parentPath, TRASH_DIR } from '../../content/paths.ts';
import { prepareMutation } from '../../content/prepare.ts';
import { DomainError } from '../../errors/domainError.ts';
import { pathInScope } from '../../policies/scope.ts';
import type { ExecRequest, ExecResult, SandboxExecutor } from '../../sandbox/executor.ts';
import type { ToolContent } from '../../tools/toolType.ts';
import { runDraftCommand } from './draftShell.ts';
import { DraftView } from './draftView.ts';
import type { KeyedLock } from '../../util/keyedLock.ts';
import type { DraftEntry, DraftRow, WorkspaceRecord, WorkspaceStore } from './workspaceStore.ts';

export interface WorkspaceDeps {
  store: WorkspaceStore;
  content: ContentStore;
  sandbox: SandboxExecutor;
  /** One section at a time per agent (shared by every view of the same workspace). */
  lock: KeyedLock;
}

/** A row as the store takes it. */
export type NewDraftRow = Omit<DraftRow, 'size' | 'updatedAt'>;

/** What a bash run in the workspace answers: the `shell` tool's result, with `version` always null. */
export type DraftExecResult = Omit<ExecResult, 'timings'>;

const DRAFT_ID = 'draft:';

/**
 * An agent's workspace as the tools library sees it (`ToolContent`): the live content with the
 * draft over it. Reads anywhere show the draft (written paths replace the live ones, deleted ones
 * are gone, folders on the way to new files appear); `write` drafts a path inside the workspace's
 * roots and refuses any other (FORBIDDEN); `exec` runs a command over the live content with the
 * draft laid over it and keeps what the command changed as the draft. Nothing here writes the
 * live content: `AgentWorkspaces.complete` does, as one commit.
 *
 * Draft nodes: a drafted path keeps the id of the live node it replaces, or gets `draft:<path>`
 * when there is none (a new file, a folder on the way to one). Its version is the version it will
 * have once completed if nothing changes live meanwhile: the live version it was drafted from + 1,
 * or 1 for a new node; `write` checks `baseVersion` against that. Untouched nodes are the live
 * ones. Draft files have no git blob yet: their `contentHash` is null.
 */
export class WorkspaceContent implements ToolContent {
  /** The drafted paths as last read (the reads of ToolContent are synchronous): see refresh. */
  private entries: readonly DraftEntry[];

  constructor(
    private readonly d: WorkspaceDeps,
    readonly record: WorkspaceRecord,
    entries: readonly DraftEntry[],
  ) {
    this.entries = entries;
  }

  /**
   * Reads the drafted paths again. The reads answer from the rows as last read: the toolset
   * refreshes before each tool call (a call sees the draft as it was when it began, and its own
   * writes), and every change of the draft here reads them under the workspace's lock first.
   */
  async refresh(): Promise<void> {
    this.entries = await this.d.store.entries(this.agentId);
  }

  get agentId(): string {
    return this.record.agentId;
  }

  get projectId(): string {
    return this.record.projectId;
  }

  /** The folders drafts may be written in ('' = the whole project). */
  get roots(): readonly string[] {
    return this.record.roots;
  }

  inRoots(path: string): boolean {
    return this.record.roots.some((r) => pathInScope(r, path));
  }

  // ------------------------------------------------------------------ reads

  findById(id: string): NodeInfo | null {
    if (typeof id !== 'string') return null;
    if (id.startsWith(DRAFT_ID)) {
      const n = this.node(this.view(), id.slice(DRAFT_ID.length));
      return n?.id === id ? n : null;
    }
    const live = this.d.content.findById(id);
    if (!live || live.projectId !== this.projectId || live.state !== 'active') return live;
    const v = this.view();
    if (!v.concerns(live.path)) return live;
    const n = this.node(v, live.path);
    return n?.id === live.id ? n : null;
  }

  findByPath(projectId: string, path: string): NodeInfo | null {
    const p = normalizePath(path);
    if (projectId !== this.projectId || p === '' || isTrashPath(p) || p === TRASH_DIR) return this.d.content.findByPath(projectId, p);
    return this.node(this.view(), p);
  }

  listChildren(projectId: string, path = ''): NodeInfo[] {
    const p = normalizePath(path);
    if (projectId !== this.projectId || isTrashPath(p) || p === TRASH_DIR) return this.d.content.listChildren(projectId, p);
    const v = this.view();
    if (!v.concerns(p)) return this.d.content.listChildren(projectId, p);
    return this.children(v, p);
  }

  tree(projectId: string, path = '', maxDepth = -1): TreeNode {
    const p = normalizePath(path);
    if (projectId !== this.projectId || isTrashPath(p) || p === TRASH_DIR) return this.d.content.tree(projectId, p, maxDepth);
    const v = this.view();
    if (!v.concerns(p)) return this.d.content.tree(projectId, p, maxDepth);
    const top = p === '' ? this.d.content.statPath(projectId, '') : this.node(v, p);
    if (!top) throw new NotFoundError(`no node at ${p}`, { path: p });
    const build = (n: NodeInfo, depth: number): TreeNode => {
      if (n.type !== 'folder' || (maxDepth >= 0 && depth >= maxDepth)) return { ...n, children: null };
      const children = this.children(v, n.path).map((c) => {
        if (v.touches(c.path)) return build(c, depth + 1);
        if (c.type !== 'folder') return { ...c, children: null };
        // Untouched by the draft: the live subtree in one look-up.
        return this.d.content.tree(projectId, c.path, maxDepth < 0 ? -1 : maxDepth - depth - 1);
      });
      return { ...n, children };
    };
    return build(top, 0);
  }

  async readContent(projectId: string, ref: NodeRef): Promise<{ node: NodeInfo; bytes: Buffer }> {
    if (projectId !== this.projectId) return this.d.content.readContent(projectId, ref);
    const node = 'id' in ref ? this.findById(ref.id) : this.findByPath(projectId, ref.path);
    if (!node || node.projectId !== projectId) throw new NotFoundError('id' in ref ? `no node ${ref.id}` : `no node at ${ref.path}`, 'id' in ref ? { id: ref.id } : { path: ref.path });
    if (node.type === 'folder') throw new NotFoundError(`${node.path} is a folder`, { path: node.path });
    const row = node.state === 'active' ? this.view().at(node.path) : undefined;
    if (row?.action === 'written') return { node, bytes: (await this.d.store.content(this.agentId, node.path)) ?? Buffer.alloc(0) };
    return this.d.content.readContent(projectId, { id: node.id });
  }

  /** Blame is of committed versions: a path the draft changed has none for its draft content yet. */
  async blame(projectId: string, ref: NodeRef, version?: number): ReturnType<ContentStore['blame']> {
    if (projectId !== this.projectId) return this.d.content.blame(projectId, ref, version);
    const node = 'id' in ref ? this.findById(ref.id) : this.findByPath(projectId, ref.path);
    if (!node || node.projectId !== projectId) throw new NotFoundError('id' in ref ? `no node ${ref.id}` : `no node at ${ref.path}`, 'id' in ref ? { id: ref.id } : { path: ref.path });
    if (node.state === 'active' && this.view().at(node.path)) {
      throw new ValidationError(`${node.path} has draft changes in this workspace: blame shows committed versions only`, { path: node.path });
    }
    return this.d.content.blame(projectId, { id: node.id }, version);
  }

  async readValue(projectId: string, ref: NodeRef): Promise<{ node: NodeInfo; value: unknown }> {
    const { node, bytes } = await this.readContent(projectId, ref);
    return { node, value: decodeContent(node.type, bytes) };
  }

  // ------------------------------------------------------------------ writes

  /**
   * Drafts one file (the content store's `write`, into the draft): the content is checked and
   * encoded by the core's own rules (type, encoding, size), the state rules are the core's too (a
   * folder is there, a file is where a folder must be, `baseVersion` against the draft's version).
   * Only the agent writes its draft; paths outside the roots are FORBIDDEN.
   */
  async write(
    projectId: string,
    actor: Actor,
    input: { path: string; type: WritableNodeType; content: unknown; baseVersion?: number; message?: string },
  ): Promise<WriteResult> {
    if (projectId !== this.projectId) throw new DomainError('FORBIDDEN', "The agent's workspace holds drafts of its own project only.");
    if (actor.type !== 'agent' || actor.id !== this.agentId) throw new DomainError('FORBIDDEN', "Only the agent itself writes into its workspace.");
    const mutation = { op: 'write' as const, path: input.path, type: input.type, content: input.content, ...(input.baseVersion !== undefined ? { baseVersion: input.baseVersion } : {}) };
    const m = prepareMutation(mutation, undefined, {
      maxContentBytes: this.d.content.maxContentBytes,
      gitdir: () => {
        throw new Error('a draft holds no stored blobs');
      },
    }) as Extract<PreparedMutation, { op: 'write' }>;
    this.requireRoot(m.path);
    return this.d.lock.run(this.agentId, () => this.draftWrite(m));
  }

  /**
   * Runs a command over `scope` with the draft laid over the live content; with `read_write`, what
   * the command changed there becomes the draft (nothing is written to the live content). The
   * answer has the `shell` tool's shape: `changes` are what the command changed in the draft.
   */
  async exec(req: ExecRequest): Promise<DraftExecResult> {
    const scope = normalizePath(req.scope, 'scope');
    if (req.grant.projectId !== this.projectId) throw new DomainError('FORBIDDEN', "The agent's workspace holds drafts of its own project only.");
    if (req.mode === 'read_write') this.requireRoot(scope);
    return this.d.lock.run(this.agentId, async () => {
      const record = await this.requireOpen();
      await this.refresh();
      const result = await runDraftCommand({ store: this.d.store, content: this.d.content, sandbox: this.d.sandbox, record, view: this.view(), node: (v, p) => this.node(v, p) }, { ...req, scope });
      await this.refresh();
      return result;
    });
  }

  // ------------------------------------------------------------------ the overlay

  /** The workspace's drafted paths as last read (refresh). */
  view(): DraftView {
    return new DraftView(this.entries);
  }

  /** The node at `path` with the draft over the live content, or null. */
  node(v: DraftView, path: string): NodeInfo | null {
    if (path === '') return null;
    if (v.hidden(path)) return null;
    const row = v.at(path);
    const live = this.liveAt(path);
    if (row) {
      if (row.action === 'deleted') return null;
      if (row.type === 'folder') return live?.type === 'folder' ? live : this.draftFolder(v, path);
      return this.draftFile(row, live);
    }
    if (v.writtenBeneath(path) && live?.type !== 'folder') return this.draftFolder(v, path);
    return live;
  }

  /** An active live node at `path` (the draft aside). */
  liveAt(path: string): NodeInfo | null {
    const n = this.d.content.findByPath(this.projectId, path);
    return n && n.state === 'active' ? n : null;
  }

  /** The children of a folder with the draft over it, folders first then by name (as the index lists them). */
  private children(v: DraftView, path: string): NodeInfo[] {
    if (path !== '') {
      const self = this.node(v, path);
      if (!self) throw new NotFoundError(`no node at ${path}`, { path });
      if (self.type !== 'folder') throw new ValidationError(`${path} is not a folder`, { path });
    }
    const live = path === '' || this.liveAt(path)?.type === 'folder' ? this.d.content.listChildren(this.projectId, path) : [];
    const out: NodeInfo[] = [];
    const seen = new Set<string>();
    for (const c of live) {
      seen.add(c.name);
      const n = v.touches(c.path) ? this.node(v, c.path) : c;
      if (n) out.push(n);
    }
    for (const name of v.childNames(path)) {
      if (seen.has(name)) continue;
      const n = this.node(v, joinPath(path, name));
      if (n) out.push(n);
    }
    return out.sort((a, b) => Number(a.type !== 'folder') - Number(b.type !== 'folder') || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private draftFile(row: DraftEntry, live: NodeInfo | null): NodeInfo {
    const same = live !== null && live.type !== 'folder' && live.id === row.baseNodeId;
    const name = baseName(row.path);
    const type = row.type as WritableNodeType;
    return {
      ...this.draftBase(row.path),
      id: same ? live.id : DRAFT_ID + row.path,
      type,
      size: row.size,
      mimeType: mimeTypeFor(type, name),
      version: same ? (row.baseVersion ?? 0) + 1 : 1,
      createdAt: same ? live.createdAt : row.updatedAt,
      updatedAt: row.updatedAt,
    };
  }

  private draftFolder(v: DraftView, path: string): NodeInfo {
    return { ...this.draftBase(path), childrenCount: v.childNames(path).size };
  }

  private draftBase(path: string): NodeInfo {
    const parent = parentPath(path);
    const now = this.record.updatedAt;
    return {
      id: DRAFT_ID + path,
      projectId: this.projectId,
      path,
      name: baseName(path),
      parentId: parent === '' ? null : (this.liveAt(parent)?.id ?? DRAFT_ID + parent),
      type: 'folder',
      contentHash: null,
      size: 0,
      mimeType: null,
      state: 'active',
      version: 1,
      childrenCount: null,
      createdAt: now,
      updatedAt: now,
      originalPath: null,
      deletedAt: null,
      deletedBy: null,
    };
  }

  // ------------------------------------------------------------------ drafting a write

  private async draftWrite(m: Extract<PreparedMutation, { op: 'write' }>): Promise<WriteResult> {
    await this.requireOpen();
    await this.refresh();
    const { path } = m;
    const bytes = m.bytes!;
    const v = this.view();
    const current = this.node(v, path);
    if (current?.type === 'folder') throw new ConflictError(`${path} is a folder`, { path });
    if (m.baseVersion !== undefined) {
      if (current && current.version !== m.baseVersion) {
        // The content store's wording (README), 0 included.
        throw new ConflictError(`${path} is at version ${current.version}, not ${m.baseVersion}`, { path, current_version: current.version, base_version: m.baseVersion });
      }
      if (!current && m.baseVersion !== 0) throw new ConflictError(`${path} does not exist (expected version ${m.baseVersion})`, { path, current_version: null, base_version: m.baseVersion });
    }
    const changes = this.makeWay(v, path);
    if (current && changes.size === 0 && current.type === m.type && (await this.sameBytes(v, current, bytes, m.blobId))) {
      return { node: current, changed: false, commitId: null, projectVersion: null };
    }
    const after = withChanges(v, changes);
    const row = after.at(path);
    const live = this.liveAt(path);
    const base = row
      ? { baseVersion: row.baseVersion, baseNodeId: row.baseNodeId, baseProjectVersion: row.baseProjectVersion }
      : { baseVersion: live?.version ?? null, baseNodeId: live?.id ?? null, baseProjectVersion: this.d.content.projectVersion(this.projectId) };
    const backToLive = live !== null && live.id === base.baseNodeId && live.version === base.baseVersion && live.type === m.type && live.contentHash === m.blobId;
    // Written back to what the live node holds (at the version drafted from): no draft there any more.
    changes.set(path, backToLive ? null : { path, action: 'written', type: m.type, content: bytes, ...base });
    const remove = [...changes].filter(([, r]) => r === null).map(([p]) => p);
    const upsert = [...changes.values()].filter((r): r is NewDraftRow => r !== null);
    await this.d.store.change(this.agentId, remove, upsert);
    await this.refresh();
    const node = this.node(this.view(), path)!;
    return { node, changed: true, commitId: null, projectVersion: null };
  }

  /**
   * Makes the way to `path` through the draft, top down: a folder the draft deleted stays a
   * folder but keeps its other entries deleted (one row each: no row lies beneath a deletion), a
   * file it deleted becomes a folder; a file on the way (drafted or live) is a conflict, as the
   * core answers. Returns the rows to change (null: remove).
   */
  private makeWay(v: DraftView, path: string): Map<string, NewDraftRow | null> {
    const changes = new Map<string, NewDraftRow | null>();
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const cur = withChanges(v, changes);
      const dir = segments.slice(0, i).join('/');
      const row = cur.at(dir);
      const live = this.liveAt(dir);
      if (row?.action === 'written') {
        if (row.type !== 'folder') throw new ConflictError(`${dir} is a file, not a folder`, { path: dir });
        continue;
      }
      if (row?.action === 'deleted') {
        changes.set(dir, null);
        if (live?.type === 'folder' && live.id === row.baseNodeId) {
          for (const child of this.d.content.listChildren(this.projectId, dir)) {
            const then = this.d.content.versionAtProjectVersion(this.projectId, { id: child.id }, row.baseProjectVersion);
            if (then) changes.set(child.path, { path: child.path, action: 'deleted', type: child.type, content: null, baseVersion: then.version, baseNodeId: child.id, baseProjectVersion: row.baseProjectVersion });
          }
        } else if (live) {
          changes.set(dir, { path: dir, action: 'written', type: 'folder', content: null, baseVersion: row.baseVersion, baseNodeId: row.baseNodeId, baseProjectVersion: row.baseProjectVersion });
        }
        continue;
      }
      if (live && live.type !== 'folder' && !cur.writtenBeneath(dir)) throw new ConflictError(`${dir} is a file, not a folder`, { path: dir });
    }
    return changes;
  }

  /** Whether the node (as the draft shows it) holds exactly `bytes`. */
  private async sameBytes(v: DraftView, node: NodeInfo, bytes: Buffer, blobId: string): Promise<boolean> {
    if (v.at(node.path)?.action !== 'written') return node.contentHash === blobId;
    return ((await this.d.store.content(this.agentId, node.path)) ?? Buffer.alloc(0)).equals(bytes);
  }

  private requireRoot(path: string): void {
    if (this.inRoots(path)) return;
    const roots = this.record.roots.map((r) => `"${r === '' ? '/' : r}"`).join(', ');
    throw new DomainError('FORBIDDEN', `"${path}" is outside this agent's workspace, which holds drafts beneath ${roots}.`, { path });
  }

  /** The workspace still open (a completion or discard may have closed it since this view was made). */
  private async requireOpen(): Promise<WorkspaceRecord> {
    const now = await this.d.store.find(this.agentId);
    if (!now || now.createdAt !== this.record.createdAt) throw new DomainError('NOT_FOUND', 'This workspace was completed or discarded.');
    return now;
  }
}

/** The view with pending row changes applied (rows of `changes` replace or remove those of `v`). */
function withChanges(v: DraftView, changes: Map<string, NewDraftRow | null>): DraftView {
  if (changes.size === 0) return v;
  const entries: DraftEntry[] = v.entries.filter((e) => !changes.has(e.path));
  for (const r of changes.values()) if (r) entries.push({ ...r, size: r.content?.length ?? 0, updatedAt: '' });
  return new DraftView(entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
}
