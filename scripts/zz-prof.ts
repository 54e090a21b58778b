import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.ts';
import { ContentStore } from '../src/content/contentStore.ts';
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const db = openDatabase(join(dir, 'cns.db'));
const store = new ContentStore({ dataDir: dir, db, gitBinary: process.argv[2] === 'iso' ? null : 'git' });
await store.createProject('p');
const parts: string[] = [];
const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
let f = 0;
for (let i = 1; i <= Number(process.env.N ?? 1000); i++) {
  parts.push(`commit refs/heads/main\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\n`, data(`commit ${i}`));
  for (let k = 0; k < 5; k++) { parts.push(`M 100644 inline d${f % 100}/file${f}.md\n`, data(`# file ${f}\n\nwritten by commit ${i}\n`)); f = (f + 1) % 5000; }
}
execFileSync('git', [`--git-dir=${join(dir, 'p.git')}`, 'fast-import', '--quiet'], { input: parts.join('') });
const t0 = performance.now();
await store.syncFromGit('p', { actor: { type: 'user', id: 'u', author: 'u@e' }, receivedAt: new Date().toISOString(), keepCommitAuthor: true });
console.log('sync ms', (performance.now() - t0).toFixed(0));
await store.close(); db.close(); rmSync(dir, { recursive: true, force: true });
