import * as fs from 'node:fs';
import { join } from 'node:path';
import type { ContentStore } from '../../src/content/contentStore.ts';
import { alice } from '../content/helpers.ts';

export const P = 'proj';

export const LONG_NAME = `${'long-name-'.repeat(15)}.md`;

/** What `seedProject` leaves as the project's content: file paths and their bytes, and folders. */
export const SEEDED_FILES: Record<string, Buffer> = {
  'docs/readme.md': Buffer.from('# Readme\n'),
  'docs/guide/intro.md': Buffer.from('# Intro\n\nhello\n'),
  'data/config.json': Buffer.from('{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}\n'),
  'bin/blob.bin': Buffer.from([0, 1, 2, 255]),
  'notes/café ü.md': Buffer.from('unicode name\n'),
  [`deep/${LONG_NAME}`]: Buffer.from('a name too long for a plain tar header\n'),
};
export const SEEDED_FOLDERS = ['bin', 'data', 'deep', 'docs', 'docs/guide', 'empty', 'empty/inner', 'notes'];

/** A project with files of each type, nested and empty folders, and a trashed file. */
export async function seedProject(store: ContentStore): Promise<void> {
  await store.commit(P, alice, [
    { op: 'write', path: 'docs/readme.md', type: 'markdown', content: '# Readme\n' },
    { op: 'write', path: 'docs/guide/intro.md', type: 'markdown', content: '# Intro\n\nhello\n' },
    { op: 'write', path: 'data/config.json', type: 'json', content: { b: 1, a: [1, 2] } },
    { op: 'write', path: 'bin/blob.bin', type: 'file', content: Buffer.from([0, 1, 2, 255]) },
    { op: 'write', path: 'notes/café ü.md', type: 'markdown', content: 'unicode name\n' },
    { op: 'write', path: `deep/${LONG_NAME}`, type: 'markdown', content: 'a name too long for a plain tar header\n' },
    { op: 'write', path: 'gone.md', type: 'markdown', content: 'to the trash\n' },
  ]);
  await store.mkdir(P, alice, 'empty/inner');
  await store.remove(P, alice, 'gone.md');
}

/** Files (with bytes) and folders under `dir`, by path relative to it. */
export function listTree(dir: string): { files: Record<string, Buffer>; folders: string[]; other: string[] } {
  const files: Record<string, Buffer> = {};
  const folders: string[] = [];
  const other: string[] = [];
  const walk = (rel: string) => {
    for (const d of fs.readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        folders.push(path);
        walk(path);
      } else if (d.isFile()) {
        files[path] = fs.readFileSync(join(dir, path));
      } else {
        other.push(path);
      }
    }
  };
  walk('');
  return { files, folders: folders.sort(), other };
}

/**
 * Mount points at or below `root`: in this process's mount table and, given the pid holding a
 * pool's mount namespace, in that namespace's (gone with it: none then).
 */
export function mountsUnder(root: string, namespacePid?: number | null): string[] {
  const tables = ['/proc/self/mounts', ...(namespacePid ? [`/proc/${namespacePid}/mounts`] : [])];
  return tables.flatMap((table) => {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((p) => p === root || p.startsWith(`${root}/`));
  });
}

/** Whether process `pid` still exists (a namespace's holder). */
export function alive(pid: number): boolean {
  return fs.existsSync(`/proc/${pid}`);
}

export const isRoot = process.getuid?.() === 0;
