import * as fs from 'node:fs';
import { diffCopy, diffOverlay } from './folderDiff.ts';
import { sameScan, scanFolder, type FolderScan } from './folderScan.ts';
import type { FolderLayout, Owner } from './materialize.ts';
import type { PristineTree } from './pristineTree.ts';
import type { FolderChanges, Workspace } from './workspace.ts';

/** A pristine checkout: one subtree at one commit, handed to one owner. Folders are made from it. */
export interface Pristine {
  key: string;
  /** Project, scope and owner: checkouts of older commits of a group are dropped. */
  group: string;
  projectId: string;
  scope: string;
  commitId: string | null;
  owner: Owner;
  dir: string;
  tree: PristineTree;
  /** Whether `dir` is on the pool's tmpfs (counts against its budget). */
  inTmpfs: boolean;
  /** Folders made from it that still exist (busy, idle or being removed): it stays while any does. */
  users: number;
  lastUsed: number;
  /** No longer wanted: removed once its last folder is. */
  stale: boolean;
  removed: boolean;
}

/** The state a folder must still be in to be handed out again. */
type Baseline = { kind: 'copy'; scan: FolderScan } | { kind: 'overlay'; root: { mode: number; uid: number; gid: number } };

/** One working folder of the pool, handed out to one run at a time. */
export class RunFolder {
  state: 'busy' | 'idle' | 'gone' = 'busy';
  lastUsed = Date.now();

  constructor(
    readonly layout: FolderLayout,
    readonly pristine: Pristine,
    /** Folders are reused only for the same checkout and the same disk cap. */
    readonly idleKey: string,
    private readonly baseline: Baseline,
  ) {}

  static copy(layout: FolderLayout, pristine: Pristine, idleKey: string, scan: FolderScan): RunFolder {
    return new RunFolder(layout, pristine, idleKey, { kind: 'copy', scan });
  }

  static overlay(layout: FolderLayout, pristine: Pristine, idleKey: string): RunFolder {
    const st = fs.lstatSync(layout.upper!);
    return new RunFolder(layout, pristine, idleKey, { kind: 'overlay', root: { mode: st.mode, uid: st.uid, gid: st.gid } });
  }

  async changes(): Promise<FolderChanges> {
    const { dir } = this.layout;
    if (this.baseline.kind === 'overlay') return diffOverlay(dir, this.layout.upper!, this.pristine.dir, this.pristine.tree);
    return diffCopy(dir, this.pristine.dir, this.pristine.tree, this.baseline.scan, await scanFolder(dir));
  }

  /**
   * Whether the folder is exactly as handed out, so the next run may have it as it is. An
   * overlay is when nothing is in its upper layer and its root kept its mode and owner (two
   * system calls); a copy when a new scan equals the baseline entry by entry.
   */
  async unchanged(): Promise<boolean> {
    if (this.baseline.kind === 'copy') return sameScan(this.baseline.scan, await scanFolder(this.layout.dir));
    const upper = this.layout.upper!;
    const st = fs.lstatSync(upper);
    const root = this.baseline.root;
    return st.mode === root.mode && st.uid === root.uid && st.gid === root.gid && fs.readdirSync(upper).length === 0;
  }
}

/** What a caller holds: the folder until it releases it, then nothing. */
export class WorkspaceHandle implements Workspace {
  private released = false;

  constructor(
    private readonly folder: RunFolder,
    private readonly giveBack: (folder: RunFolder) => Promise<void>,
  ) {}

  get dir(): string {
    return this.folder.layout.dir;
  }

  get projectId(): string {
    return this.folder.pristine.projectId;
  }

  get scope(): string {
    return this.folder.pristine.scope;
  }

  get commitId(): string | null {
    return this.folder.pristine.commitId;
  }

  changes(): Promise<FolderChanges> {
    if (this.released) return Promise.reject(new Error('the workspace was released'));
    return this.folder.changes();
  }

  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    return this.giveBack(this.folder);
  }
}
