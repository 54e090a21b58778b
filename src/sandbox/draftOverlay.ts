import { chown, lstat, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConflictError } from '../content/contentStore.ts';
import { needsChown, type Owner } from './workspace/materialize.ts';
import type { ChangeAction, FolderChanges, SkippedEntry } from './workspace/workspace.ts';
import { projectPath } from './writeBack.ts';

/**
 * One drafted path laid over a sandbox folder (project paths inside the run's scope): a file with
 * its bytes, a folder the draft made, or a deletion (the path and everything beneath it).
 */
export interface OverlayEntry {
  path: string;
  action: 'written' | 'deleted';
  kind: 'file' | 'folder';
  /** A written file's bytes (null otherwise). */
  bytes: Buffer | null;
}

/** What a draft run left in its folder, compared with the live content it was made from. */
export interface DraftChanges {
  /** Created and modified files with their bytes, deleted files without; project paths. */
  files: { path: string; action: ChangeAction; bytes: Buffer | null }[];
  folders: { path: string; action: ChangeAction }[];
  /** Entries not taken (links, refused names, files too big): a draft keeps what it had there. */
  skipped: SkippedEntry[];
}

const relativeTo = (scope: string, path: string) => (scope === '' ? path : path.slice(scope.length + 1));

/**
 * Lays the draft over a folder holding the live subtree `scope`: deletions first, then folders
 * and files (a written path replaces whatever the live content has there), each new entry handed
 * to `owner` (the sandbox's uid) like the rest of the folder.
 */
export async function layOverlay(dir: string, scope: string, entries: readonly OverlayEntry[], owner: Owner): Promise<void> {
  const give = needsChown(owner) ? (abs: string) => chown(abs, owner.uid, owner.gid) : async () => undefined;
  for (const e of entries) if (scope !== '' && !e.path.startsWith(`${scope}/`)) throw new Error(`overlay entry ${e.path} is not beneath ${scope}`);
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const e of sorted) if (e.action === 'deleted') await rm(join(dir, relativeTo(scope, e.path)), { recursive: true, force: true });

  /** Makes the folders down to `rel` ('' = the run's folder itself); a file in the way is a conflict. */
  const folder = async (rel: string, path: string) => {
    let cur = '';
    for (const seg of rel === '' ? [] : rel.split('/')) {
      cur = cur === '' ? seg : `${cur}/${seg}`;
      const abs = join(dir, cur);
      const st = await lstat(abs).catch(() => null);
      if (st?.isDirectory()) continue;
      if (st) {
        // The draft's own path replaces what is there; a live file above a drafted path blocks it.
        if (cur !== rel) throw new ConflictError(`The draft of ${path} cannot be laid over the live content: ${join(scope, cur)} is a file there now.`, { path });
        await rm(abs, { recursive: true, force: true });
      }
      await mkdir(abs, { mode: 0o755 });
      await give(abs);
    }
  };
  for (const e of sorted) {
    if (e.action !== 'written') continue;
    const rel = relativeTo(scope, e.path);
    if (e.kind === 'folder') {
      await folder(rel, e.path);
      continue;
    }
    const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    await folder(parent, e.path);
    const abs = join(dir, rel);
    const st = await lstat(abs).catch(() => null);
    if (st?.isDirectory()) await rm(abs, { recursive: true, force: true });
    await writeFile(abs, e.bytes ?? Buffer.alloc(0), { mode: 0o644 });
    await give(abs);
  }
}

/**
 * Reads what differs between the run's folder and the live subtree it was made from, with the
 * bytes of created and modified files. Names the content API would refuse and files larger than
 * `maxContentBytes` are skipped, as the write-back skips them.
 */
export async function readDraftChanges(dir: string, scope: string, changes: FolderChanges, maxContentBytes: number): Promise<DraftChanges> {
  const skipped: SkippedEntry[] = [...changes.skipped];
  const files: DraftChanges['files'] = [];
  const folders: DraftChanges['folders'] = [];
  for (const c of changes.files) {
    const path = projectPath(scope, c.path, skipped);
    if (path === null) continue;
    if (c.action === 'deleted') {
      files.push({ path, action: c.action, bytes: null });
      continue;
    }
    const abs = join(dir, c.path);
    const { size } = await stat(abs);
    if (size > maxContentBytes) {
      skipped.push({ path: c.path, reason: `larger than the ${maxContentBytes} bytes a node may hold` });
      continue;
    }
    files.push({ path, action: c.action, bytes: await readFile(abs) });
  }
  for (const f of changes.folders) {
    const path = projectPath(scope, f.path, skipped);
    if (path !== null) folders.push({ path, action: f.action });
  }
  return { files, folders, skipped };
}
