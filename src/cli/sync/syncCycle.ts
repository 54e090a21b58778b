import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { ApiError } from '../client/errors.ts';
import { Progress } from '../client/progress.ts';
import type { CliOutput } from '../io.ts';
import type { BaseStore } from './baseStore.ts';
import { emptyReport, type CycleReport } from './cycleReport.ts';
import { blobId, type FileState, type FolderStore, type SyncState } from './folderState.ts';
import type { IgnoreRules } from './ignoreRules.ts';
import { absPath, conflictName, localPathProblem, renameLocal, scanFolder, trashLocal, writeLocal, type LocalFile } from './localFiles.ts';
import { FETCH_IDS, type PulledFile, type SyncApi } from './syncApi.ts';
import { mergeThreeWay } from './fileMerge.ts';
import { planPush, type PlannedOp } from './pushPlan.ts';

export interface CycleContext {
  root: string;
  scope: string;
  store: FolderStore;
  state: SyncState;
  api: SyncApi;
  rules: IgnoreRules;
  bases: BaseStore;
  /** Where progress bars of large transfers go (false: none). */
  progress: CliOutput | false;
  /**
   * Watch mode: the paths the file watcher reported since the last cycle. Only those (and the
   * paths the pulled changes touch) are looked at; null scans the whole folder.
   */
  dirty: Set<string> | null;
}

/** A planned push operation and, once loaded, the file's bytes and the stat they were read at. */
type Outgoing = PlannedOp & { bytes?: Buffer; file?: LocalFile };

/** Ops per push request (one commit each) and the content bytes it may carry. */
const BATCH_OPS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
const SHOW_PROGRESS_FROM = 200;
const PROGRESS_STEP = 500;
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
      this.local = await this.localFiles(pulled.files);
      await this.applyRemote(pulled.files, pulled.runId);
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
    const r = this.report;
    // Transfers run in parallel: report in path order.
    for (const list of [r.downloaded, r.uploaded, r.deletedLocal, r.deletedRemote, r.merged, r.keptLocal]) list.sort();
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

  /**
   * The folder's files: a full scan, or in watch mode the state's record of tracked files with
   * only the reported and remotely touched paths checked on disk (a 10,000-file folder then costs
   * a few stats per cycle, not 10,000).
   */
  private async localFiles(pulled: PulledFile[]): Promise<Map<string, LocalFile>> {
    const { dirty, state, root, rules } = this.ctx;
    const wide = pulled.some((f) => f.action === 'delete' && (f.node_type === 'folder' || f.path === ''));
    if (!dirty || wide) return scanFolder(root, rules);
    const files = new Map<string, LocalFile>();
    for (const [rel, f] of Object.entries(state.files)) files.set(rel, { size: f.size, mtimeMs: f.mtimeMs });
    const check = new Set(dirty);
    const touched = new Set(pulled.map((f) => f.node_id));
    for (const f of pulled) {
      const rel = this.relOf(f.path);
      if (rel) check.add(rel);
    }
    for (const [rel, f] of Object.entries(state.files)) if (touched.has(f.nodeId)) check.add(rel);
    await inParallel([...check], DOWNLOADS_IN_FLIGHT, async (rel) => {
      if (rules.ignores(rel)) return void files.delete(rel);
      try {
        const st = await stat(absPath(root, rel));
        if (st.isFile()) files.set(rel, { size: st.size, mtimeMs: st.mtimeMs });
        else files.delete(rel);
      } catch {
        files.delete(rel);
      }
    });
    return files;
  }

  // ------------------------------------------------------------ remote → folder

  private async applyRemote(all: PulledFile[], runId: string): Promise<void> {
    // A path that cannot be a file of this folder on every platform is reported, never written.
    const files = all.filter((f) => {
      const why = f.path === '' ? null : localPathProblem(f.path);
      if (why) this.report.errors.push(`${f.path}: not written here: ${why}`);
      return !why;
    });
    const upserted = new Set(files.filter((f) => f.action === 'upsert').map((f) => f.node_id));
    for (const f of files) if (f.action === 'delete') await this.remoteDeleted(f, upserted);
    const byNode = this.nodeIndex();
    const upserts = files.filter((f) => f.action === 'upsert');
    // Known nodes first, so that renames free their old paths before new nodes claim them.
    const known = upserts.filter((f) => byNode.has(f.node_id));
    const fresh = upserts.filter((f) => !byNode.has(f.node_id));
    const bar = this.ctx.progress && upserts.length >= SHOW_PROGRESS_FROM ? new Progress('downloading', upserts.length, sum(upserts.map((f) => f.size)), this.ctx.progress) : null;
    // Progress in steps, so that off a terminal it is a line per few hundred files, not per file.
    let count = 0;
    let bytes = 0;
    const advance = (f: PulledFile) => {
      count++;
      bytes += f.size;
      if (bar && count >= PROGRESS_STEP) {
        bar.advance(count, bytes);
        count = 0;
        bytes = 0;
      }
    };
    // Content comes in chunks, the next one fetched while the current one is written: memory
    // stays bounded by a chunk, whatever the size of the folder.
    const chunks = [...chunk(known, FETCH_IDS).map((c) => ({ files: c, parallel: false })), ...chunk(fresh, FETCH_IDS).map((c) => ({ files: c, parallel: true }))];
    let next = chunks.length ? this.fetchContent(chunks[0]!.files, byNode, runId) : null;
    for (let i = 0; i < chunks.length; i++) {
      const bodies = await next!;
      next = i + 1 < chunks.length ? this.fetchContent(chunks[i + 1]!.files, byNode, runId) : null;
      const apply = async (f: PulledFile) => {
        const current = bodies.get(f.node_id);
        // A file deleted since the listing is left to the next cycle's pull.
        if (current?.action !== 'delete') await this.remoteUpserted(current ?? f, byNode);
        advance(f);
      };
      if (chunks[i]!.parallel) await inParallel(chunks[i]!.files, DOWNLOADS_IN_FLIGHT, apply);
      else for (const f of chunks[i]!.files) await apply(f);
    }
    if (bar && count > 0) bar.advance(count, bytes);
    bar?.done();
  }

  /** The content of a pulled file, fetched now if the listing came without it. */
  private async bytesOf(f: PulledFile): Promise<Buffer | null> {
    if (f.content !== undefined) return Buffer.from(f.content, 'base64');
    const [current] = await this.ctx.api.fetch([f.node_id], this.report.runId!);
    if (!current || current.action === 'delete' || current.content === undefined) return null;
    return Buffer.from(current.content, 'base64');
  }

  /** Content of the files whose bytes this folder does not already have (renames and re-versions need none). */
  private async fetchContent(files: PulledFile[], byNode: Map<string, string>, runId: string): Promise<Map<string, PulledFile>> {
    const state = this.ctx.state.files;
    const needed = files.filter((f) => {
      const rel = byNode.get(f.node_id);
      return !(rel !== undefined && state[rel]?.remoteHash === f.content_hash);
    });
    const out = new Map<string, PulledFile>();
    if (needed.length === 0) return out;
    for (const f of await this.ctx.api.fetch(needed.map((f) => f.node_id), runId)) out.set(f.node_id, f);
    return out;
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
    if (s && s.remoteHash === f.content_hash) {
      // Same content at a new version (a move, restore or our own push): nothing to write here.
      s.version = f.version;
      return;
    }
    const remote = await this.bytesOf(f);
    if (remote === null) return; // deleted since the listing: the next cycle's pull says so
    if (!this.local.has(rel)) return this.download(rel, f, remote);
    const h = await this.hashOf(rel);
    if (s && h === s.localHash) return this.download(rel, f, remote);
    if (h === f.content_hash) return this.adopt(rel, f, h, remote);
    // Changed on both sides since the last sync.
    const mine = await readFile(absPath(this.ctx.root, rel));
    const base = s ? await this.ctx.bases.get(s.localHash) : null;
    const merged = base ? mergeThreeWay(base, mine, remote, { json: f.node_type === 'json' }) : null;
    await this.download(rel, f, remote);
    this.report.downloaded.pop();
    if (merged) {
      // The merge is a local edit on top of the remote version: the push phase sends it up.
      if (!merged.equals(remote)) await this.writeHere(rel, merged);
      this.report.merged.push(rel);
      return;
    }
    let copy = conflictName(rel, new Date());
    for (let n = 2; this.local.has(copy) || existsSync(absPath(this.ctx.root, copy)); n++) copy = conflictName(rel, new Date(), n);
    await this.writeHere(copy, mine);
    this.report.conflicts.push({ path: rel, localCopy: copy });
  }

  /** Writes the project's version here and records both sides as agreeing on it. */
  private async download(rel: string, f: PulledFile, bytes: Buffer): Promise<void> {
    await this.keepIfEditedMeanwhile(rel);
    const st = await this.writeHere(rel, bytes);
    this.record(rel, f.node_id, f.version, f.content_hash ?? blobId(bytes), this.hashes.get(rel)!, st);
    await this.ctx.bases.put(this.hashes.get(rel)!, bytes);
    this.report.downloaded.push(rel);
  }

  /**
   * The file may have been saved again since this cycle looked at it: an edit made in that window
   * is kept as a conflict copy rather than overwritten.
   */
  private async keepIfEditedMeanwhile(rel: string): Promise<void> {
    const seen = this.local.get(rel);
    let now: { size: number; mtimeMs: number };
    try {
      now = await stat(absPath(this.ctx.root, rel));
    } catch {
      return; // nothing there (any more): nothing to keep
    }
    if (seen && now.size === seen.size && now.mtimeMs === seen.mtimeMs) return;
    const mine = await readFile(absPath(this.ctx.root, rel));
    let copy = conflictName(rel, new Date());
    for (let n = 2; this.local.has(copy) || existsSync(absPath(this.ctx.root, copy)); n++) copy = conflictName(rel, new Date(), n);
    await this.writeHere(copy, mine);
    this.report.conflicts.push({ path: rel, localCopy: copy });
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
    const present = new Map<string, string | undefined>();
    const stillOnDisk = new Set<string>();
    let missing = false;
    for (const rel of Object.keys(files)) {
      if (this.local.has(rel)) present.set(rel, await this.hashOf(rel));
      else if (existsSync(absPath(this.ctx.root, rel))) stillOnDisk.add(rel);
      else missing = true;
    }
    // New files are hashed only when a tracked file is gone: only then can one be a move.
    for (const rel of this.local.keys()) if (!Object.hasOwn(files, rel)) present.set(rel, missing ? await this.hashOf(rel) : undefined);
    const plan = planPush({ scope: this.ctx.scope, tracked: files, present, stillOnDisk });
    for (const rel of plan.untrack) delete files[rel];
    const planned: Outgoing[] = plan.ops;
    if (planned.length === 0) return;
    const writes = planned.filter((p) => p.op.action === 'write');
    const bar = this.ctx.progress && planned.length >= SHOW_PROGRESS_FROM ? new Progress('uploading', planned.length, sum(writes.map((p) => this.local.get(p.rel)!.size)), this.ctx.progress) : null;
    const pushedAt: number[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown = null;
    let batch: Outgoing[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const sending = batch;
      batch = [];
      bytes = 0;
      const done = this.load(sending)
        .then((ready) => (ready.length > 0 ? this.pushBatch(ready, runId) : null))
        .then((made) => {
          pushedAt.push(...(made ?? []));
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
  private async load(batch: Outgoing[]): Promise<Outgoing[]> {
    const ready: Outgoing[] = [];
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

  /**
   * Pushes one batch (one commit) and records its results; answers the commit numbers made. A
   * batch the server refuses for one of its files (too large, invalid) is retried file by file,
   * so that one bad file is reported without holding back the others.
   */
  private async pushBatch(batch: Outgoing[], runId: string): Promise<number[]> {
    const files = this.ctx.state.files;
    const message = batch.length === 1 ? `cns sync: ${batch[0]!.op.action} ${batch[0]!.op.path}` : `cns sync: ${batch.length} changes`;
    let res: Awaited<ReturnType<SyncApi['push']>>;
    try {
      res = await this.ctx.api.push(batch.map((p) => p.op), runId, message);
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 413 && err.status !== 422)) throw err;
      if (batch.length === 1) {
        this.report.errors.push(`${batch[0]!.rel}: ${err.message}`);
        return [];
      }
      const made: number[] = [];
      for (const p of batch) made.push(...(await this.pushBatch([p], runId)));
      return made;
    }
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
        // Only a merge needs the base; failing to keep one must not fail the push.
        void this.ctx.bases.put(hash, p.bytes!).catch(() => undefined);
        if (!this.report.merged.includes(p.rel)) this.report.uploaded.push(p.rel);
      }
    });
    this.ctx.store.saveState(this.ctx.state);
    return res.project_version === null ? [] : [res.project_version];
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
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
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
