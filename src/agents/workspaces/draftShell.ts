import type { ContentStore, NodeInfo, WritableNodeType } from '../../content/contentStore.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../content/contentStore.ts';
import { seenAt } from '../../collab/mergeChanges.ts';
import { writeTypeOf } from '../../commands/writeNode.ts';
import { hashObject } from '../../content/git/objects.ts';
import { joinPath } from '../../content/paths.ts';
import type { DraftChanges } from '../../sandbox/draftOverlay.ts';
import type { ExecRequest, SandboxExecutor } from '../../sandbox/executor.ts';
import { asStored, type WrittenChange } from '../../sandbox/writeBack.ts';
import type { SkippedEntry } from '../../sandbox/workspace/workspace.ts';
import type { DraftView } from './draftView.ts';
import type { DraftExecResult, NewDraftRow } from './workspaceContent.ts';
import type { DraftRow, WorkspaceRecord, WorkspaceStore } from './workspaceStore.ts';

export interface DraftRunContext {
  store: WorkspaceStore;
  content: ContentStore;
  sandbox: SandboxExecutor;
  record: WorkspaceRecord;
  /** The draft as it stands (read under the workspace's lock). */
  view: DraftView;
  node(v: DraftView, path: string): NodeInfo | null;
}

type Base = Pick<NewDraftRow, 'baseVersion' | 'baseNodeId' | 'baseProjectVersion'>;
const baseOfRow = (r: Base): Base => ({ baseVersion: r.baseVersion, baseNodeId: r.baseNodeId, baseProjectVersion: r.baseProjectVersion });
const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * A command in an agent's workspace: the sandbox runs it over the live subtree with the draft's
 * rows beneath `scope` laid over it, and what the folder then holds (against the live content)
 * becomes the draft of that subtree. The caller holds the workspace's lock.
 */
export async function runDraftCommand(ctx: DraftRunContext, req: ExecRequest): Promise<DraftExecResult> {
  const { content, record } = ctx;
  const { scope } = req;
  const v = ctx.view;
  if (scope !== '') {
    const n = ctx.node(v, scope);
    if (!n) throw new NotFoundError(`no node at ${scope}`, { path: scope });
    if (n.type !== 'folder') throw new ValidationError(`${scope} is not a folder`, { path: scope });
    const live = content.findByPath(record.projectId, scope);
    if (!live || live.state !== 'active' || live.type !== 'folder' || v.at(scope)) {
      throw new ConflictError(`"${scope}" is a folder of the draft only: run the command from a folder above it.`, { path: scope });
    }
  }
  const beneath = (p: string) => scope === '' || p.startsWith(`${scope}/`);
  const rows = (await ctx.store.rows(record.agentId)).filter((r) => beneath(r.path));
  const overlay = rows.map((r) => ({ path: r.path, action: r.action, kind: r.type === 'folder' ? ('folder' as const) : ('file' as const), bytes: r.content }));
  const { timings: _timings, folder, baseVersion, ...run } = await ctx.sandbox.execDraft({ ...req, overlay });
  const answer = { ...run, version: null, conflicts: [] };
  if (!folder) return { ...answer, changes: [], skipped: [] };
  const plan = reconcile(content, record.projectId, scope, baseVersion, rows, folder);
  await ctx.store.change(record.agentId, plan.remove, plan.upsert);
  return { ...answer, changes: plan.changes, skipped: plan.skipped };
}

/**
 * The draft of `scope` after a run: one row per path where the folder differs from the live
 * content it was made from (`liveVersion`). A path drafted before keeps its base; a new one is
 * based on the live node as the run saw it. Files are stored as the core will store them
 * (`encodeContent`), so a json file rewritten with other spacing is no change; a file the content
 * API would refuse (not JSON where a json node is, too big) is skipped and keeps its draft.
 */
function reconcile(content: ContentStore, projectId: string, scope: string, liveVersion: number, rows: DraftRow[], folder: DraftChanges) {
  const old = new Map(rows.map((r) => [r.path, r]));
  const next = new Map<string, NewDraftRow>();
  const skipped: SkippedEntry[] = [...folder.skipped];
  const keep = new Set(folder.skipped.map((s) => joinPath(scope, s.path)));
  const liveAt = (p: string) => {
    const n = content.findByPath(projectId, p);
    return n && n.state === 'active' ? n : null;
  };
  const baseOf = (p: string): Base => {
    const o = old.get(p);
    if (o) return baseOfRow(o);
    const seen = seenAt(content, projectId, p, liveVersion);
    return { baseVersion: seen.version, baseNodeId: seen.nodeId, baseProjectVersion: liveVersion };
  };
  const fileType = (p: string): WritableNodeType => {
    const o = old.get(p);
    return o && o.type !== 'folder' ? o.type : writeTypeOf(content, projectId, p);
  };

  for (const f of folder.folders) {
    if (f.action === 'deleted') next.set(f.path, { path: f.path, action: 'deleted', type: 'folder', content: null, ...baseOf(f.path) });
  }
  for (const f of folder.files) {
    if (f.action === 'deleted') next.set(f.path, { path: f.path, action: 'deleted', type: fileType(f.path), content: null, ...baseOf(f.path) });
  }
  for (const f of folder.files) {
    if (f.action === 'deleted') continue;
    const type = fileType(f.path);
    let bytes: Buffer;
    try {
      bytes = asStored(type, f.bytes!);
    } catch (e) {
      skipped.push({ path: relative(scope, f.path), reason: (e as Error).message });
      keep.add(f.path);
      continue;
    }
    if (bytes.length > content.maxContentBytes) {
      skipped.push({ path: relative(scope, f.path), reason: `larger than the ${content.maxContentBytes} bytes a node may hold` });
      keep.add(f.path);
      continue;
    }
    // A folder deleted at the same path: the file replaces that node.
    const prior = next.get(f.path);
    const base = prior ? baseOfRow(prior) : baseOf(f.path);
    const live = liveAt(f.path);
    if (live && live.id === base.baseNodeId && live.version === base.baseVersion && live.type === type && live.contentHash === hashObject('blob', bytes)) {
      next.delete(f.path);
      continue;
    }
    next.set(f.path, { path: f.path, action: 'written', type, content: bytes, ...base });
  }
  // Empty folders the command made (deepest first: a folder holding a new one comes with it).
  for (const f of folder.folders.filter((c) => c.action === 'created').reverse()) {
    if ([...next.values()].some((r) => r.action === 'written' && r.path.startsWith(`${f.path}/`))) continue;
    const prior = next.get(f.path);
    next.set(f.path, { path: f.path, action: 'written', type: 'folder', content: null, ...(prior ? baseOfRow(prior) : baseOf(f.path)) });
  }
  for (const p of keep) {
    const o = old.get(p);
    if (o) next.set(p, { path: o.path, action: o.action, type: o.type, content: o.content, ...baseOfRow(o) });
  }
  // No row beneath a deletion or a file: the one row above says it all.
  for (const p of [...next.keys()]) if (hiddenIn(next, p)) next.delete(p);

  const remove = [...old.keys()].filter((p) => !next.has(p));
  const upsert = [...next.values()].filter((r) => differs(old.get(r.path), r));
  return { remove, upsert, changes: reported(old, next, liveAt), skipped };
}

function hiddenIn(rows: Map<string, NewDraftRow>, path: string): boolean {
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const r = rows.get(path.slice(0, i));
    if (r && (r.action === 'deleted' || r.type !== 'folder')) return true;
  }
  return false;
}

function differs(o: DraftRow | undefined, r: NewDraftRow): boolean {
  if (!o) return true;
  const sameContent = o.content === null || r.content === null ? o.content === r.content : o.content.equals(r.content);
  return o.action !== r.action || o.type !== r.type || !sameContent || o.baseVersion !== r.baseVersion || o.baseNodeId !== r.baseNodeId || o.baseProjectVersion !== r.baseProjectVersion;
}

type State = { kind: 'folder' } | { kind: 'file'; type: WritableNodeType; hash: string } | null;

/** What the command changed in the draft: each drafted path as it was shown before the run and after. */
function reported(old: Map<string, DraftRow>, next: Map<string, NewDraftRow>, liveAt: (p: string) => NodeInfo | null): WrittenChange[] {
  const stateOf = (p: string, r: NewDraftRow | undefined): State => {
    if (!r) {
      const n = liveAt(p);
      if (!n) return null;
      return n.type === 'folder' ? { kind: 'folder' } : { kind: 'file', type: n.type, hash: n.contentHash ?? '' };
    }
    if (r.action === 'deleted') return null;
    return r.type === 'folder' ? { kind: 'folder' } : { kind: 'file', type: r.type, hash: hashObject('blob', r.content ?? Buffer.alloc(0)) };
  };
  const out: WrittenChange[] = [];
  for (const p of new Set([...old.keys(), ...next.keys()])) {
    const before = stateOf(p, old.get(p));
    const after = stateOf(p, next.get(p));
    const type = after ? (after.kind === 'folder' ? 'folder' : after.type) : before ? (before.kind === 'folder' ? 'folder' : before.type) : null;
    if (!type) continue;
    if (!before && after) out.push({ path: p, action: 'created', type });
    else if (before && !after) out.push({ path: p, action: 'deleted', type });
    else if (before && after && (before.kind !== after.kind || (before.kind === 'file' && after.kind === 'file' && (before.type !== after.type || before.hash !== after.hash)))) {
      out.push({ path: p, action: 'modified', type });
    }
  }
  return out.sort(byPath);
}

const relative = (scope: string, path: string) => (scope === '' ? path : path.slice(scope.length + 1));
