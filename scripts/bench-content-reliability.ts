/**
 * The longer version of the content store's reliability tests:
 *   - crash rounds: a child process writes through the store (8 concurrent writers, single
 *     writes and bulk writes, automatic repacks) and is killed with SIGKILL at a random moment;
 *     after each kill every acknowledged write must be present with its content and version,
 *     `git fsck --strict` must be clean and a rebuilt index must equal the live one;
 *   - 1,000 concurrent writers to one file: versions 1..1000, each readable with what was written.
 * Run: node --import=tsx scripts/bench-content-reliability.ts [rounds, default 10]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContentStore, type Actor } from '../src/content/contentStore.ts';
import { openDatabase } from '../src/db/database.ts';

const ROUNDS = Number(process.argv[2] ?? 10);
const actor: Actor = { type: 'user', id: 'u_rel', author: 'rel@example.com' };
const writer = join(import.meta.dirname, '..', 'test', 'content', 'fixtures', 'crashWriter.ts');

function fail(message: string): never {
  throw new Error(message);
}

async function crashRound(round: number): Promise<{ acks: number; commits: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'cns-reliability-'));
  try {
    const child = spawn(process.execPath, ['--import=tsx', writer, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.on('exit', r));
    const target = 50 + Math.floor(Math.random() * 1500);
    const deadline = Date.now() + 120_000;
    while (out.split('\n').length <= target) {
      if (Date.now() > deadline) fail(`round ${round}: the writer stalled`);
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill('SIGKILL');
    await exited;
    const acks = out.split('\n').filter((l) => l.startsWith('ACK '));
    const db = openDatabase(join(dir, 'cns.db'));
    const store = new ContentStore({ dataDir: dir, db });
    try {
      await store.reconcileAll();
      for (const line of acks) {
        const [, path, version, ...rest] = line.split(' ');
        const node = store.getByPath('crash', path);
        if (node.version < Number(version)) fail(`round ${round}: ${path} is at v${node.version}, v${version} was acknowledged`);
        const v = await store.versionContent('crash', { path }, Number(version));
        if (v.bytes.toString() !== rest.join(' ')) fail(`round ${round}: ${path} v${version} has other content`);
      }
      const fsck = execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: join(dir, 'crash.git'), stdio: 'pipe' }).toString();
      if (fsck !== '') fail(`round ${round}: git fsck: ${fsck}`);
      const report = await store.reindexProject('crash');
      if (report.differences.length > 0) fail(`round ${round}: reindex differs: ${report.differences.slice(0, 5).join('; ')}`);
      return { acks: acks.length, commits: store.projectVersion('crash') };
    } finally {
      await store.close();
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function sameFile(writers: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cns-reliability-'));
  const db = openDatabase(join(dir, 'cns.db'));
  const store = new ContentStore({ dataDir: dir, db });
  try {
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) => store.write('one', actor, { path: 'shared.md', type: 'markdown', content: `writer ${i}` })),
    );
    const seen = new Set(results.map((r) => r.node.version));
    for (let v = 1; v <= writers; v++) if (!seen.has(v)) fail(`version ${v} missing`);
    for (let i = 0; i < writers; i++) {
      const { bytes } = await store.versionContent('one', { path: 'shared.md' }, results[i].node.version);
      if (bytes.toString() !== `writer ${i}`) fail(`version ${results[i].node.version} does not hold writer ${i}`);
    }
  } finally {
    await store.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

let acks = 0;
for (let r = 1; r <= ROUNDS; r++) {
  const res = await crashRound(r);
  acks += res.acks;
  console.log(`crash round ${r}: ${res.acks} acknowledged writes verified, ${res.commits} commits, fsck clean, reindex equal`);
}
await sameFile(1000);
console.log('1,000 concurrent writers to one file: versions 1..1000 contiguous, each readable');
console.log(`all ${ROUNDS} crash rounds passed (${acks} acknowledged writes checked)`);
