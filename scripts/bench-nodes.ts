/**
 * Issue 4's figures:
 *   1. GET /nodes/{id} and GET /nodes/?parent_id= (100 children) on a 10,000-node project,
 *      p50 and p99 at 16 connections;
 *   2. snapshot list and snapshot rollback of a folder of 1,000 files in a project with 10,000 commits.
 * Run: node --import=tsx scripts/bench-nodes.ts [commits=10000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, runLoad } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const COMMITS = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = 16;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-nodes-'));
const rows: string[][] = [];

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function readFigures(url: string, token: string, projectId: string): Promise<void> {
  const files = Array.from({ length: 10_000 }, (_, i) => ({ path: `docs/d${i % 100}/f${i}.json`, content: { n: i, title: `file ${i}` }, node_type: 'json' }));
  await api(url, 'POST', `/content/${projectId}/bulk-write`, token, { files, message: 'bulk import' });
  const root = await api(url, 'GET', `/nodes/?project_id=${projectId}`, token);
  const docs = root.nodes.find((n: { name: string }) => n.name === 'docs');
  const folders = (await api(url, 'GET', `/nodes/?project_id=${projectId}&parent_id=${docs.id}`, token)).nodes as { id: string }[];
  const fileIds: string[] = [];
  for (const f of folders.slice(0, 20)) {
    const kids = (await api(url, 'GET', `/nodes/?project_id=${projectId}&parent_id=${f.id}`, token)).nodes as { id: string }[];
    if (kids.length !== 100) throw new Error(`expected 100 children, got ${kids.length}`);
    fileIds.push(...kids.map((k) => k.id));
  }
  const headers = { authorization: `Bearer ${token}` };
  const n = 20_000;
  await runLoad(url, CONCURRENCY, 2000, (i) => ({ method: 'GET', path: `/api/v1/nodes/${fileIds[i % fileIds.length]}`, headers })); // warm-up
  const trivial = await runLoad(url, CONCURRENCY, n, () => ({ method: 'GET', path: '/healthz' }));
  rows.push([`baseline: GET /healthz, ${CONCURRENCY} connections`, `${fmt(trivial.rps, 0)} req/s`, `p50 ${fmt(trivial.p50)} ms, p99 ${fmt(trivial.p99)} ms`]);
  const get = await runLoad(url, CONCURRENCY, n, (i) => ({ method: 'GET', path: `/api/v1/nodes/${fileIds[(i * 7919) % fileIds.length]}`, headers }));
  const list = await runLoad(url, CONCURRENCY, n, (i) => ({
    method: 'GET',
    path: `/api/v1/nodes/?project_id=${projectId}&parent_id=${folders[(i * 31) % folders.length]!.id}`,
    headers,
  }));
  if (get.errors + list.errors > 0) throw new Error(`read errors: get ${get.errors}, list ${list.errors}`);
  rows.push([`1. GET /nodes/{id} (json, with content), ${CONCURRENCY} connections`, `${fmt(get.rps, 0)} req/s`, `p50 ${fmt(get.p50)} ms, p99 ${fmt(get.p99)} ms`]);
  rows.push([`1. GET /nodes/?parent_id= (100 children), ${CONCURRENCY} connections`, `${fmt(list.rps, 0)} req/s`, `p50 ${fmt(list.p50)} ms, p99 ${fmt(list.p99)} ms`]);
  const single = await runLoad(url, 1, 5000, (i) => ({ method: 'GET', path: `/api/v1/nodes/${fileIds[(i * 7919) % fileIds.length]}`, headers }));
  rows.push(['1. GET /nodes/{id} at 1 connection (service time)', `${fmt(single.rps, 0)} req/s`, `p50 ${fmt(single.p50)} ms, p99 ${fmt(single.p99)} ms`]);
}

async function snapshotFigures(url: string, token: string, projectId: string): Promise<void> {
  const files = Array.from({ length: 1000 }, (_, i) => ({ path: `big/f${i}.md`, content: `# file ${i}\n`, node_type: 'markdown' }));
  const imported = await api(url, 'POST', `/content/${projectId}/bulk-write`, token, { files, message: 'the folder of 1,000 files' });
  const big = await api(url, 'GET', `/nodes/by-path?project_id=${projectId}&path=big`, token);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  // Every tenth commit changes a file in the folder, the rest change files elsewhere.
  const t0 = process.hrtime.bigint();
  const w = await runLoad(url, CONCURRENCY, COMMITS - 1, (i) => ({
    method: 'POST',
    path: `/api/v1/content/${projectId}/write`,
    headers,
    body: JSON.stringify(
      i % 10 === 0
        ? { path: `big/f${(i / 10) % 1000}.md`, content: `# file ${(i / 10) % 1000}, edit ${i}\n`, node_type: 'markdown' }
        : { path: `other/o${i % 500}.md`, content: `edit ${i}\n`, node_type: 'markdown' },
    ),
  }));
  if (w.errors) throw new Error(`${w.errors} writes failed`);
  const stats = await api(url, 'GET', `/projects/${projectId}/dashboard`, token);
  rows.push([`2. set-up: ${stats.commits} commits in the project`, `${fmt(ms(t0), 0)} ms`, '']);

  const timeList = async (query: string) => {
    const times: number[] = [];
    let data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 7; i++) {
      const t = process.hrtime.bigint();
      data = await api(url, 'GET', `/nodes/${big.id}/snapshots${query}`, token);
      times.push(ms(t));
    }
    return { data, ms: median(times) };
  };
  const list = await timeList('');
  const all = await timeList('?limit=1000');
  rows.push([`2. snapshot list of the folder (${list.data.total} snapshots, newest 50)`, `${fmt(list.ms, 1)} ms`, 'median of 7 requests']);
  rows.push(['2. snapshot list, limit=1000', `${fmt(all.ms, 1)} ms`, 'median of 7 requests']);

  const first = { snapshot_id: imported.commit_id as string }; // the import: 1,000 files, before any edit
  const middle = all.data.snapshots[Math.floor(all.data.snapshots.length / 2)];
  const rollback = async (snap: { snapshot_id: string }) => {
    const t = process.hrtime.bigint();
    const r = await api(url, 'POST', `/nodes/${big.id}/rollback-snapshot/${snap.snapshot_id}`, token);
    return { ms: ms(t), changed: r.nodes.length };
  };
  const r1 = await rollback(first);
  const r2 = await rollback(middle);
  const r3 = await rollback(first);
  rows.push([`2. snapshot rollback to the import (${r1.changed} nodes changed)`, `${fmt(r1.ms, 1)} ms`, '']);
  rows.push([`2. snapshot rollback to a middle snapshot (${r2.changed} nodes changed)`, `${fmt(r2.ms, 1)} ms`, '']);
  rows.push([`2. snapshot rollback back to the import (${r3.changed} nodes changed)`, `${fmt(r3.ms, 1)} ms`, '']);
  const check = await api(url, 'GET', `/nodes/?project_id=${projectId}&parent_id=${big.id}&include_content=true`, token);
  if (check.nodes.length !== 1000 || check.nodes.some((n: { name: string; content: string }) => n.content !== `# ${n.name.replace('f', 'file ').replace('.md', '')}\n`)) {
    throw new Error('the folder is not back at the import');
  }
}

try {
  const server = await startBenchServer(join(work, 'data'));
  try {
    const reads = await benchProject(server.url);
    await readFigures(server.url, reads.token, reads.projectId);
    const orgs = await api(server.url, 'GET', '/organizations/', reads.token);
    const second = await api(server.url, 'POST', '/projects/', reads.token, { name: 'snapshots', org_id: orgs.organizations[0].id });
    await snapshotFigures(server.url, reads.token, second.id);
  } finally {
    await server.stop();
  }
  const width = Math.max(...rows.map((r) => r[0]!.length));
  console.log(`\nfigure${' '.repeat(width - 6)} | value | latency`);
  for (const [name, value, extra] of rows) console.log(`${name!.padEnd(width)} | ${value} | ${extra}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
