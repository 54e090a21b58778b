import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Progress } from '../../cli/client/progress.ts';
import type { PushOp } from '../pushOps.ts';
import type { BaseStore } from './baseStore.ts';
import { emptyReport, type CycleReport } from './cycleReport.ts';
import { blobId, type FileState, type FolderStore, type SyncState } from './folderState.ts';
import type { IgnoreRules } from './ignoreRules.ts';
import { absPath, conflictName, renameLocal, scanFolder, trashLocal, writeLocal, type LocalFile } from './localFiles.ts';
import type { PulledFile, SyncApi } from './syncApi.ts';
import { mergeThreeWay } from './textMerge.ts';

export interface CycleContext {
  root: string;
  scope: string;
  store: FolderStore;
  state: SyncState;
  api: SyncApi;
  rules: IgnoreRules;
  bases: BaseStore;
  /** Show progress bars for large transfers. */
  progress: boolean;
}

/** Ops per push request (one commit each) and the content bytes it may carry. */
const BATCH_OPS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
const SHOW_PROGRESS_FROM = 200;
/** Local file writes in flight while downloading, and push requests in flight while uploading. */
const DOWNLOADS_IN_FLIGHT = 32;
const PUSHES_IN_FLIGHT = 4;

/**
 * One sync cycle: pull the project's changes since the cursor, apply them to the folder (merging
 * where both sides changed), push the folder's own changes, acknowledge. The state is saved after
 * each step that changed it, so a crash or a lost connection resumes without losing or repeating
 * work: every decision compares content hashes, never timestamps alone.
 */
export class SyncCycle {
  private local = new Map<string, LocalFile>();
  private readonly hashes = new Map<string, string>();
  private readonly report: CycleReport;

  constructor(private readonly ctx: CycleContext) {
    this.report = emptyReport(ctx.state.cursor);
  }

  async run(): Promise<CycleReport> {
    const { api, state, store } = this.ctx;
    const pulled = await this.pullAll();
    this.report.runId = pulled.runId;
    try {
      this.local = await scanFolder(this.ctx.root, this.ctx.rules);
      await this.applyRemote(pulled.files);
      state.cursor = pulled.cursor;
      this.report.cursor = pulled.cursor;
      store.saveState(state);
      await this.pushLocal(pulled.runId);
    } catch (err) {
      store.saveState(state);
      await api
        .ack({ cursor: state.cursor, runId: pulled.runId, filesDown: this.report.downloaded.length, conflicts: [], errors: [(err as Error).message] })
        .catch(() => undefined);
      throw err;
    }
    store.saveState(state);
    await api.ack({
      cursor: state.cursor,
      runId: pulled.runId,
      filesDown: this.report.downloaded.length + this.report.deletedLocal.length + this.report.renamedLocal.length,
      conflicts: this.report.conflicts.map((c) => c.path),
      errors: this.report.errors,
    });
    return this.report;
  }

  // ------------------------------------------------------------ pull

  private async pullAll(): Promise<{ runId: string; cursor: number; files: PulledFile[] }> {
    const { api, state } = this.ctx;
    const first = await api.pull({ cursor: state.cursor });
    const files = [...first.files];
    let page = first;
    while (page.has_more) {
      page = await api.pull({ cursor: state.cursor, until: first.cursor, after: page.next_after ?? undefined, runId: first.run_id });
      files.push(...page.files);
    }
    if (first.snapshot) {
      // A full listing: tracked files missing from it were deleted in the project.
      const listed = new Set(files.map((f) => f.node_id));
      for (const s of Object.values(state.files)) {
        if (!listed.has(s.nodeId)) files.push({ action: 'delete', node_id: s.nodeId, node_type: 'file', path: '', version: 0, content_hash: null, size: 0 });
      }
    }
    return { runId: first.run_id, cursor: first.cursor, files };
  }

  // ------------------------------------------------------------ remote → folder

  private async applyRemote(files: PulledFile[]): Promise<void> {
    const upserted = new Set(files.filter((f) => f.action === 'upsert').map((f) => f.node_id));
    for (const f of files) if (f.action === 'delete') await this.remoteDeleted(f, upserted);
    const byNode = this.nodeIndex();
    const upserts = files.filter((f) => f.action === 'upsert');
    // Known nodes first, so that renames free their old paths before new nodes claim them.
    const known = upserts.filter((f) => byNode.has(f.node_id));
    const fresh = upserts.filter((f) => !byNode.has(f.node_id));
    const bar = this.ctx.progress && upserts.length >= SHOW_PROGRESS_FROM ? new Progress('downloading', upserts.length, sum(upserts.map((f) => f.size))) : null;
    for (const f of known) {
      await this.remoteUpserted(f, byNode);
      bar?.advance(1, f.size);
    }
    // New nodes have distinct paths no rename can touch any more: write them in parallel.
    await inParallel(fresh, DOWNLOADS_IN_FLIGHT, async (f) => {
      await this.remoteUpserted(f, byNode);
      bar?.advance(1, f.size);
    });
    bar?.done();
  }

  private async remoteDeleted(f: PulledFile, upserted: Set<string>): Promise<void> {
    const files = this.ctx.state.files;
    let rels: string[];
    if (f.node_type === 'folder') {
      const dir = this.relOf(f.path);
      if (dir === null) return;
      rels = Object.keys(files).filter((r) => (dir === '' || r.startsWith(dir + '/')) && !upserted.has(files[r]!.nodeId));
    } else {
      rels = Object.keys(files).filter((r) => files[r]!.nodeId === f.node_id);
    }
    for (const rel of rels) {
      const s = files[rel]!;
      delete files[rel];
      const l = this.local.get(rel);
      if (!l) continue;
      if ((await this.hashOf(rel)) === s.localHash) {
        await trashLocal(this.ctx.root, this.ctx.store.trashDir, rel, stamp());
        this.local.delete(rel);
        this.report.deletedLocal.push(rel);
      } else {
        // Edited here: the edit survives and goes up again as a new file.
        this.report.keptLocal.push(rel);
      }
    }
  }

  private async remoteUpserted(f: PulledFile, byNode: Map<string, string>): Promise<void> {
    const files = this.ctx.state.files;
    const rel = this.relOf(f.path);
    if (rel === null || rel === '' || this.ctx.rules.ignores(rel)) return;
    const oldRel = byNode.get(f.node_id);
    if (oldRel !== undefined && oldRel !== rel) {
      if (this.local.has(rel) || files[rel]) {
        // The new name is taken here: keep both by treating it as a deletion plus a creation.
        await this.remoteDeleted({ ...f, action: 'delete' }, new Set());
      } else {
        const s = files[oldRel]!;
        delete files[oldRel];
        files[rel] = s;
        if (this.local.has(oldRel)) {
          this.local.set(rel, await renameLocal(this.ctx.root, oldRel, rel));
          this.local.delete(oldRel);
          const h = this.hashes.get(oldRel);
          if (h) this.hashes.set(rel, h);
          this.report.renamedLocal.push({ from: oldRel, to: rel });
        }
      }
      byNode.set(f.node_id, rel);
    }
    const s0 = files[rel];
    const s = s0 && s0.nodeId === f.node_id ? s0 : undefined;
    if (s && s.version === f.version && s.remoteHash === f.content_hash) return;
    const remote = Buffer.from(f.content ?? '', 'base64');
    if (!this.local.has(rel)) return this.download(rel, f, remote);
    const h = await this.hashOf(rel);
    if (s && h === s.localHash) return this.download(rel, f, remote);
    if (h === f.content_hash) return this.adopt(rel, f, h, remote);
    // Changed on both sides since the last sync.
    const mine = await readFile(absPath(this.ctx.root, rel));
    const base = s ? await this.ctx.bases.get(s.localHash) : null;
    const merged = base ? mergeThreeWay(base, mine, remote) : null;
    await this.download(rel, f, remote);
    this.report.downloaded.pop();
    if (merged) {
      // The merge is a local edit on top of the remote version: the push phase sends it up.
      if (!merged.equals(remote)) await this.writeHere(rel, merged);
      this.report.merged.push(rel);
      return;
    }
    const copy = conflictName(rel, new Date());
    await this.writeHere(copy, mine);
    this.report.conflicts.push({ path: rel, localCopy: copy });
  }

  /** Writes the project's version here and records both sides as agreeing on it. */
  private async download(rel: string, f: PulledFile, bytes: Buffer): Promise<void> {
    const st = await this.writeHere(rel, bytes);
    this.record(rel, f.node_id, f.version, f.content_hash ?? blobId(bytes), this.hashes.get(rel)!, st);
    await this.ctx.bases.put(this.hashes.get(rel)!, bytes);
    this.report.downloaded.push(rel);
  }

  /** Same bytes on both sides already (created or edited identically): only the state changes. */
  private async adopt(rel: string, f: PulledFile, hash: string, bytes: Buffer): Promise<void> {
    this.record(rel, f.node_id, f.version, f.content_hash ?? hash, hash, this.local.get(rel)!);
    await this.ctx.bases.put(hash, bytes);
  }

  private async writeHere(rel: string, bytes: Buffer): Promise<LocalFile> {
    const st = await writeLocal(this.ctx.root, rel, bytes);
    this.local.set(rel, st);
    this.hashes.set(rel, blobId(bytes));
    return st;
  }

  // ------------------------------------------------------------ folder → remote

  private async pushLocal(runId: string): Promise<void> {
    const files = this.ctx.state.files;
    const deletes: string[] = [];
    const edits: string[] = [];
    for (const [rel, s] of Object.entries(files)) {
      if (!this.local.has(rel)) {
        // Still on disk but now ignored: stop syncing it rather than deleting it from the project.
        if (existsSync(absPath(this.ctx.root, rel))) delete files[rel];
        else deletes.push(rel);
      } else if ((await this.hashOf(rel)) !== s.localHash) {
        edits.push(rel);
      }
    }
    const creates = [...this.local.keys()].filter((rel) => !files[rel]);
    const moves: { from: string; to: string }[] = [];
    if (deletes.length > 0 && creates.length > 0) {
      const byHash = new Map<string, string[]>();
      for (const rel of creates) {
        const h = await this.hashOf(rel);
        byHash.set(h, [...(byHash.get(h) ?? []), rel]);
      }
      for (let i = deletes.length - 1; i >= 0; i--) {
        const from = deletes[i]!;
        const to = byHash.get(files[from]!.localHash)?.shift();
        if (to === undefined) continue;
        moves.push({ from, to });
        deletes.splice(i, 1);
        creates.splice(creates.indexOf(to), 1);
      }
    }
    type Planned = { op: PushOp; rel: string; from?: string; bytes?: Buffer; file?: LocalFile };
    const planned: Planned[] = [
      ...deletes.map((rel) => ({ op: { action: 'delete', path: this.projectPath(rel), base_version: files[rel]!.version } as PushOp, rel })),
      ...moves.map((m) => ({
        op: { action: 'move', from: this.projectPath(m.from), path: this.projectPath(m.to), base_version: files[m.from]!.version } as PushOp,
        rel: m.to,
        from: m.from,
      })),
      ...[...edits, ...creates].map((rel) => ({ op: { action: 'write', path: this.projectPath(rel), content: '', base_version: files[rel]?.version ?? 0 } as PushOp, rel })),
    ];
    if (planned.length === 0) return;
    const writes = planned.filter((p) => p.op.action === 'write');
    const bar = this.ctx.progress && planned.length >= SHOW_PROGRESS_FROM ? new Progress('uploading', planned.length, sum(writes.map((p) => this.local.get(p.rel)!.size))) : null;
    const pushedAt: number[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown = null;
    let batch: Planned[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const sending = batch;
      batch = [];
      bytes = 0;
      const done = this.load(sending)
        .then((ready) => (ready.length > 0 ? this.pushBatch(ready, runId) : null))
        .then((pv) => {
          if (pv !== null) pushedAt.push(pv);
          bar?.advance(sending.length, sum(sending.map((p) => p.bytes?.length ?? 0)));
          for (const p of sending) p.bytes = undefined;
        })
        .catch((err: unknown) => {
          failure ??= err;
        })
        .finally(() => inFlight.delete(done));
      inFlight.add(done);
      // Deletes and moves go one request at a time, in order; writes are independent and pipelined.
      const limit = sending.some((p) => p.op.action !== 'write') ? 1 : PUSHES_IN_FLIGHT;
      while (inFlight.size >= limit) await Promise.race(inFlight);
    };
    let batchWrites = true;
    for (const p of planned) {
      if (failure) break;
      const isWrite = p.op.action === 'write';
      const size = isWrite ? this.local.get(p.rel)!.size : 0;
      if (batch.length > 0 && (bytes + size > BATCH_BYTES || isWrite !== batchWrites)) await flush();
      if (batch.length === 0) batchWrites = isWrite;
      batch.push(p);
      bytes += size;
      if (batch.length >= BATCH_OPS) await flush();
    }
    await flush();
    await Promise.all(inFlight);
    bar?.done();
    if (failure) throw failure;
    // When every commit after the cursor is one of ours, the folder already holds them: skip
    // pulling our own changes back.
    pushedAt.sort((x, y) => x - y);
    if (pushedAt.every((pv, i) => pv === this.ctx.state.cursor + i + 1)) this.ctx.state.cursor += pushedAt.length;
  }

  /** Reads the files a batch writes (in parallel); files deleted since the scan drop out until the next cycle. */
  private async load<P extends { op: PushOp; rel: string; bytes?: Buffer; file?: LocalFile }>(batch: P[]): Promise<P[]> {
    const ready: P[] = [];
    await inParallel(batch, DOWNLOADS_IN_FLIGHT, async (p) => {
      if (p.op.action === 'write') {
        try {
          p.file = this.local.get(p.rel)!;
          p.bytes = await readFile(absPath(this.ctx.root, p.rel));
        } catch {
          return;
        }
        (p.op as { content: string }).content = p.bytes.toString('base64');
      }
      ready.push(p);
    });
    // Keep the planned order (deletes and moves must stay in sequence).
    const kept = new Set(ready);
    return batch.filter((p) => kept.has(p));
  }

  /** Pushes one batch (one commit) and records its results; answers the commit number, null when nothing changed. */
  private async pushBatch(batch: { op: PushOp; rel: string; from?: string; bytes?: Buffer; file?: LocalFile }[], runId: string): Promise<number | null> {
    const files = this.ctx.state.files;
    const message = batch.length === 1 ? `cns sync: ${batch[0]!.op.action} ${batch[0]!.op.path}` : `cns sync: ${batch.length} changes`;
    const res = await this.ctx.api.push(batch.map((p) => p.op), runId, message);
    this.report.cursor = Math.max(this.report.cursor, res.project_version ?? 0);
    batch.forEach((p, i) => {
      const r = res.files[i]!;
      if (p.op.action === 'delete') {
        delete files[p.rel];
        this.report.deletedRemote.push(p.rel);
      } else if (p.op.action === 'move') {
        const s = files[p.from!]!;
        delete files[p.from!];
        files[p.rel] = { ...s, nodeId: r.node_id ?? s.nodeId, version: r.version ?? s.version, remoteHash: r.content_hash ?? s.remoteHash };
        this.report.renamedRemote.push({ from: p.from!, to: p.rel });
      } else {
        const hash = blobId(p.bytes!);
        this.record(p.rel, r.node_id!, r.version!, r.content_hash!, hash, p.file!);
        void this.ctx.bases.put(hash, p.bytes!);
        if (!this.report.merged.includes(p.rel)) this.report.uploaded.push(p.rel);
      }
    });
    this.ctx.store.saveState(this.ctx.state);
    return res.project_version;
  }

  // ------------------------------------------------------------ helpers

  private record(rel: string, nodeId: string, version: number, remoteHash: string, localHash: string, st: LocalFile): void {
    const s: FileState = { nodeId, version, remoteHash, localHash, size: st.size, mtimeMs: st.mtimeMs };
    this.ctx.state.files[rel] = s;
  }

  /** Content hash of a local file, trusting the state when size and mtime are unchanged (like git's index). */
  private async hashOf(rel: string): Promise<string> {
    const known = this.hashes.get(rel);
    if (known) return known;
    const l = this.local.get(rel)!;
    const s = this.ctx.state.files[rel];
    let h: string;
    if (s && s.size === l.size && s.mtimeMs === l.mtimeMs) h = s.localHash;
    else h = blobId(await readFile(absPath(this.ctx.root, rel)));
    this.hashes.set(rel, h);
    return h;
  }

  private nodeIndex(): Map<string, string> {
    const m = new Map<string, string>();
    for (const [rel, s] of Object.entries(this.ctx.state.files)) m.set(s.nodeId, rel);
    return m;
  }

  /** Folder-relative path of a project path; null outside the synced subtree. */
  private relOf(projectPath: string): string | null {
    const scope = this.ctx.scope;
    if (projectPath === '') return null;
    if (scope === '') return projectPath;
    if (projectPath === scope) return '';
    return projectPath.startsWith(scope + '/') ? projectPath.slice(scope.length + 1) : null;
  }

  private projectPath(rel: string): string {
    return this.ctx.scope === '' ? rel : `${this.ctx.scope}/${rel}`;
  }
}

/** Runs `work` over `items` with at most `limit` at a time. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\.(\d+)Z$/, '.$1Z');
}
