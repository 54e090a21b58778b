/**
 * The web dashboard's figures (issue 19), in headless chromium against `cns serve` in its own
 * process, on a project of 10,000 files (9 folders × 10 subfolders × 100 files, plus `big/`
 * with exactly 1,000 files: 10 folders at the root):
 *   1. initial load: JavaScript + CSS transferred (compressed bodies, cold cache) < 300 KB, and
 *      the tree's first rows on the 10,000-file project < 1.5 s;
 *   2. opening the folder of 1,000 children: click → first page of rows rendered < 200 ms
 *      (the tree pages children by 200); click → all 1,000 rendered through "Load more" is
 *      reported beside it;
 *   3. a change made by another client (POST …/write from this process) appears in the open
 *      tree < 1 s, from the request's send to the row in the DOM, 10 times: p50 and max;
 *   4. (issue 34) a deep link to a file of the 10,000-file project, opened with the sign-in
 *      cookie present and the HTTP cache cleared: navigation start → the file's rendered text
 *      painted < 1 s (median of the runs);
 *   5. (issue 34) quick open on a project of 100,000 files (the second argument; 9 × 10 × 100
 *      folders of files named alike): Ctrl+K → every path read (reported: requests, bytes, time),
 *      then each keystroke of a few queries typed into the palette → its results painted
 *      < 50 ms (p50 and max over all keystrokes, each measured in the page).
 * A cold load of `/projects/<id>` in a fresh browser (no session cookie) shows the sign-in form
 * first; the script signs in through it at once (as the tests do) and the dashboard then opens
 * the project named by the URL (figure 4 is the same with the cookie already there). Times are taken inside the page
 * (performance.now(), a MutationObserver, then the next animation frame, i.e. painted).
 * Prints a table with PASS/FAIL; exits 1 on any FAIL.
 * Run: node --import=tsx scripts/bench-web.ts [runs=5] [quick-open files=100000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../test/helpers/browser.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

/* The page's globals, for the functions page.evaluate runs there (the root tsconfig has no DOM types). */
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any, MutationObserver: any, KeyboardEvent: any, InputEvent: any, requestAnimationFrame: (callback: () => void) => number;

const RUNS = Number(process.argv[2] ?? 5);
const QUICK_FILES = Number(process.argv[3] ?? 100_000);
const LIVE_REPS = 10;
const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-password';
const BIG = 'big';
const BIG_COUNT = 1000;

const row = (name: string, type: string) => `[role="tree"] button[aria-label="${name} (${type})"]`;
const bigName = (i: number) => `f${String(i).padStart(4, '0')}.md`;

/** Watches the DOM from the first script on: when the sign-in form is submitted, when the tree's first row appears (and is painted). */
const INIT_SCRIPT = `
  globalThis.__name ??= (f) => f; // tsx (esbuild keepNames) wraps the functions passed to page.evaluate in __name()
  window.__bench = { submit: null, firstRow: null, firstRowPainted: null };
  addEventListener('submit', () => { if (window.__bench.submit === null) window.__bench.submit = performance.now(); }, true);
  const mo = new MutationObserver(() => {
    if (window.__bench.firstRow === null && document.querySelector('[role="tree"] [role="treeitem"]')) {
      window.__bench.firstRow = performance.now();
      requestAnimationFrame(() => setTimeout(() => { window.__bench.firstRowPainted = performance.now(); }, 0));
      mo.disconnect();
    }
  });
  mo.observe(document, { childList: true, subtree: true });
`;

interface LoadRun {
  jsCssEncoded: number; // compressed bodies (Resource Timing encodedBodySize, = CDP encodedDataLength minus headers)
  jsCssWire: number; // CDP Network.loadingFinished encodedDataLength (bodies + response headers)
  jsCssDecoded: number;
  fcp: number; // first-contentful-paint entry: the sign-in form
  submit: number;
  firstRow: number; // in the DOM
  firstRowPainted: number;
  openFirstPage: number;
  openFirstPagePainted: number;
  openAll: number;
  openAllPainted: number;
  loadMoreClicks: number;
  openNetFirst: number; // the first page's GET tree, request start → last byte
  openNetAll: number; // the 5 GET tree requests of the whole opening, summed
  steps: number[]; // click → rows in the DOM: the first page, then each Load more
  net: number[]; // each of those GET tree requests, request start → last byte
  mainThread: Record<string, number>; // the whole opening's main-thread time by kind, ms (CDP Performance.getMetrics)
}

async function oneRun(browser: Browser, baseUrl: string, projectId: string, keepPage: boolean): Promise<{ run: LoadRun; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } }); // fresh: cold cache
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript(INIT_SCRIPT);

  // CDP: compressed bytes on the wire of every script and stylesheet.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  const kinds = new Map<string, string>();
  let jsCssWire = 0;
  cdp.on('Network.responseReceived', (e) => kinds.set(e.requestId, e.type));
  cdp.on('Network.loadingFinished', (e) => {
    const t = kinds.get(e.requestId);
    if (t === 'Script' || t === 'Stylesheet') jsCssWire += e.encodedDataLength;
  });

  await page.goto(`${baseUrl}/projects/${projectId}`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator(row(BIG, 'folder')).waitFor({ timeout: 15_000 }).catch(async (err) => {
    throw new Error(`no tree row: ${(err as Error).message}\npage errors: ${errors.join('; ')}\npage text: ${(await page.locator('body').innerText()).slice(0, 500)}`);
  });
  await page.waitForFunction(() => window.__bench.firstRowPainted !== null);
  const load = await page.evaluate(() => {
    const b = window.__bench;
    const res = performance.getEntriesByType('resource') as any[];
    const jsCss = res.filter((r: any) => /\.(m?js|css)(\?|$)/.test(new URL(r.name).pathname));
    return {
      jsCssEncoded: jsCss.reduce((s: number, r: any) => s + r.encodedBodySize, 0),
      jsCssDecoded: jsCss.reduce((s: number, r: any) => s + r.decodedBodySize, 0),
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      submit: b.submit as number,
      firstRow: b.firstRow as number,
      firstRowPainted: b.firstRowPainted as number,
    };
  });

  // Main-thread time of the opening (CDP Performance metrics, seconds → ms).
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const before = await metrics();
  // 2. Open `big/`: the click and the waiting happen in the page, so no round trip to this process is counted.
  const open = await page.evaluate(
    async ({ bigSel, firstSel, lastSel, count }) => {
      const frame = () => new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0)));
      const until = (test: () => boolean) =>
        new Promise<number>((resolve) => {
          if (test()) return resolve(performance.now());
          const mo = new MutationObserver(() => {
            if (test()) {
              mo.disconnect();
              resolve(performance.now());
            }
          });
          mo.observe(document.body, { childList: true, subtree: true, attributes: true });
        });
      const rowsIn = () => document.querySelectorAll('[role="tree"] [role="treeitem"][aria-level="2"]').length;
      const t0 = performance.now();
      document.querySelector(bigSel).click();
      const first = await until(() => !!document.querySelector(firstSel));
      const firstPainted = await frame();
      const steps = [first - t0];
      let clicks = 0;
      for (;;) {
        if (document.querySelector(lastSel) && rowsIn() >= count) break;
        const more = document.querySelector('[role="tree"] button[aria-label="Load more in big"]');
        if (!more) throw new Error(`no Load more button, ${rowsIn()} rows`);
        const before = rowsIn();
        await until(() => !more.disabled);
        const c = performance.now();
        more.click();
        clicks++;
        steps.push((await until(() => rowsIn() > before)) - c);
      }
      const all = performance.now();
      const allPainted = await frame();
      // Timing breakdown: the tree requests this opening made (request start → last byte).
      const net = (performance.getEntriesByType('resource') as any[])
        .filter((r) => r.startTime >= t0 && /\/tree\?/.test(r.name))
        .map((r) => r.responseEnd - r.startTime);
      return {
        openFirstPage: first - t0,
        openFirstPagePainted: firstPainted - t0,
        openAll: all - t0,
        openAllPainted: allPainted - t0,
        loadMoreClicks: clicks,
        openNetFirst: net[0] ?? NaN,
        openNetAll: net.reduce((a, b) => a + b, 0),
        steps,
        net,
      };
    },
    { bigSel: row(BIG, 'folder'), firstSel: row(bigName(0), 'markdown'), lastSel: row(bigName(BIG_COUNT - 1), 'markdown'), count: BIG_COUNT },
  );
  const after = await metrics();
  const mainThread = Object.fromEntries(['TaskDuration', 'ScriptDuration', 'LayoutDuration', 'RecalcStyleDuration'].map((k) => [k, (after[k]! - before[k]!) * 1000]));
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  if (!keepPage) await context.close();
  return { run: { ...load, jsCssWire, ...open, mainThread }, page };
}

/** 4. A deep link to a file, opened with the sign-in cookie present and the HTTP cache cleared: navigation start → its rendered text painted. */
async function deepLink(browser: Browser, baseUrl: string, projectId: string, path: string, heading: string): Promise<{ shown: number; painted: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(baseUrl);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.clearBrowserCache');
  await page.addInitScript(`
    globalThis.__name ??= (f) => f;
    window.__deep = { shown: null, painted: null };
    const mo = new MutationObserver(() => {
      const h = document.querySelector('article[aria-label="Rendered Markdown"] h1');
      if (h && h.textContent === ${JSON.stringify(heading)} && window.__deep.shown === null) {
        window.__deep.shown = performance.now();
        requestAnimationFrame(() => setTimeout(() => { window.__deep.painted = performance.now(); }, 0));
        mo.disconnect();
      }
    });
    mo.observe(document, { childList: true, subtree: true });
  `);
  await page.goto(`${baseUrl}/projects/${projectId}/files/${path}`);
  await page.waitForFunction(() => window.__deep.painted !== null, null, { timeout: 15_000 });
  const r = await page.evaluate(() => ({ shown: window.__deep.shown as number, painted: window.__deep.painted as number }));
  await context.close();
  return r;
}

/** Queries typed into quick open, a key at a time: a name, a path spelled loosely, a folder and name, nothing that matches. */
const QUICK_QUERIES = ['f99', 'p7s3f42.md', 's9/f1', 'zzzz'];

/**
 * 5. Quick open on the large project: Ctrl+K → every path read (the palette says "N files"),
 * then each keystroke → its results painted, all measured in the page (input event dispatched →
 * the results list changed → the next frame).
 */
async function quickOpen(browser: Browser, baseUrl: string, projectId: string, count: number) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript('globalThis.__name ??= (f) => f;');
  await page.goto(baseUrl);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.goto(`${baseUrl}/projects/${projectId}`);
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
  const result = await page.evaluate(
    async ({ want, queries }) => {
      const frame = () => new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0)));
      /** Resolves when the results list answers `q` (its data-query), rendered. */
      const answered = (list: any, q: string) =>
        new Promise<void>((resolve) => {
          if (list.dataset.query === q) return resolve();
          const mo = new MutationObserver(() => {
            if (list.dataset.query !== q) return;
            mo.disconnect();
            resolve();
          });
          mo.observe(list, { attributes: true, attributeFilter: ['data-query'] });
        });
      const t0 = performance.now();
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'k', ctrlKey: true, bubbles: true }));
      await new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`the palette did not read ${want}: ${document.querySelector('.palette-status')?.textContent}`)), 600_000);
        const check = () => {
          if (document.querySelector('.palette-status')?.textContent === want) {
            clearTimeout(deadline);
            resolve();
          } else setTimeout(check, 10);
        };
        check();
      });
      const loaded = performance.now() - t0;
      const tree = (performance.getEntriesByType('resource') as any[]).filter((r) => r.startTime >= t0 && /\/paths\?/.test(r.name));
      const input = document.querySelector('dialog.palette input');
      const list = document.querySelector('dialog.palette [role="listbox"]');
      const keys: { query: string; ms: number }[] = [];
      const top: string[] = [];
      for (const q of queries) {
        input.value = '';
        input.dispatchEvent(new InputEvent('input', { bubbles: true }));
        await answered(list, '');
        await frame();
        for (let i = 1; i <= q.length; i++) {
          const seen = answered(list, q.slice(0, i));
          const start = performance.now();
          input.value = q.slice(0, i);
          input.dispatchEvent(new InputEvent('input', { bubbles: true, data: q[i - 1], inputType: 'insertText' }));
          await seen;
          keys.push({ query: q.slice(0, i), ms: (await frame()) - start });
        }
        top.push(`${q} → ${document.querySelector('dialog.palette [role="option"]')?.textContent ?? '(none)'}`);
      }
      return { loaded, requests: tree.length, bytes: tree.reduce((n, r) => n + r.encodedBodySize, 0), treeMs: tree.reduce((n, r) => n + (r.responseEnd - r.startTime), 0), keys, top };
    },
    { want: `${count.toLocaleString('en')} files`, queries: QUICK_QUERIES },
  );
  await context.close();
  return result;
}

/** 3. A write from this process → the row in the open tree, LIVE_REPS times, at `folder` ('' = root). */
async function liveChanges(page: Page, baseUrl: string, token: string, projectId: string, folder: string): Promise<number[]> {
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
  const times: number[] = [];
  for (let i = 0; i < LIVE_REPS; i++) {
    const name = folder ? `a-live-${i}.md` : `live-${i}.md`; // sorts among the loaded rows (a name past them would sit behind "Load more")
    const path = folder ? `${folder}/${name}` : name;
    await page.evaluate((sel) => {
      const w = window;
      w.__seen = null;
      const mo = new MutationObserver(() => {
        if (document.querySelector(sel)) {
          w.__seen = performance.timeOrigin + performance.now();
          mo.disconnect();
        }
      });
      mo.observe(document.body, { childList: true, subtree: true });
    }, row(name, 'markdown'));
    const sent = performance.timeOrigin + performance.now(); // same machine clock as the page's
    await api(baseUrl, 'POST', `/content/${projectId}/write`, token, { path, node_type: 'markdown', content: `# live ${i}\n` });
    const seen = (await (
      await page.waitForFunction(() => window.__seen, null, { timeout: 10_000, polling: 20 }).catch(async (err) => {
        const rows = await page.evaluate(() => [...document.querySelectorAll('[role="tree"] button.row')].map((b) => b.getAttribute('aria-label')).filter((l) => !/^f\d|^s\d/.test(l ?? '')));
        throw new Error(`${name} did not appear: ${(err as Error).message}; rows ${rows.join(' | ')}`);
      })
    ).jsonValue()) as number;
    times.push(seen - sent);
    await new Promise((r) => setTimeout(r, 150));
  }
  return times;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;
const kb = (x: number) => `${(x / 1024).toFixed(1)} KB`;

const dataDir = mkdtempSync(join(tmpdir(), 'cns-bench-web-'));
const started = Date.now();
const server = await startBenchServer(dataDir);
let browser: Browser | undefined;
let failed = false;
try {
  const { token, projectId } = await benchProject(server.url);
  const files: { path: string; content: string; node_type: string }[] = [];
  for (let d = 0; d < 9; d++) for (let s = 0; s < 10; s++) for (let f = 0; f < 100; f++) files.push({ path: `d${d}/s${s}/f${f}.md`, content: `# ${d}/${s}/${f}\n`, node_type: 'markdown' });
  for (let i = 0; i < BIG_COUNT; i++) files.push({ path: `${BIG}/${bigName(i)}`, content: `# big ${i}\n`, node_type: 'markdown' });
  const t0 = performance.now();
  await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files, message: 'bench seed' });
  console.log(`seeded ${files.length} files in ${ms(performance.now() - t0)}`);

  browser = await launchBrowser();
  await oneRun(browser, server.url, projectId, false); // warm-up (server caches, chromium's first start)
  const runs: LoadRun[] = [];
  let lastPage: Page | undefined;
  for (let i = 0; i < RUNS; i++) {
    const { run, page } = await oneRun(browser, server.url, projectId, i === RUNS - 1);
    runs.push(run);
    if (i === RUNS - 1) lastPage = page;
  }
  const liveRoot = await liveChanges(lastPage!, server.url, token, projectId, '');
  const liveBig = await liveChanges(lastPage!, server.url, token, projectId, BIG);

  const timeTree = async (limit: number) => {
    const xs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await api(server.url, 'GET', `/content/${projectId}/tree?path=${BIG}&max_depth=1&limit=${limit}`, token);
      xs.push(performance.now() - t);
    }
    return median(xs);
  };
  const tree200 = await timeTree(200);
  const tree1000 = await timeTree(1000);

  // 4. Deep links to a file of the 10,000-file project (sign-in cookie present, cache cleared).
  await deepLink(browser, server.url, projectId, 'd8/s9/f99.md', '8/9/99'); // warm-up
  const deep: { shown: number; painted: number }[] = [];
  for (let i = 0; i < RUNS; i++) deep.push(await deepLink(browser, server.url, projectId, `d${i % 9}/s${(i * 3) % 10}/f${(i * 37) % 100}.md`, `${i % 9}/${(i * 3) % 10}/${(i * 37) % 100}`));

  // 5. Quick open on a project of QUICK_FILES files.
  const quickId = (await api(server.url, 'POST', '/projects/', token, { name: 'quick open bench', org_id: (await api(server.url, 'GET', `/projects/${projectId}`, token)).org_id })).id as string;
  const quickPaths: string[] = [];
  for (let a = 0; quickPaths.length < QUICK_FILES; a++) for (let b = 0; b < 10 && quickPaths.length < QUICK_FILES; b++) for (let c = 0; c < 100 && quickPaths.length < QUICK_FILES; c++) quickPaths.push(`p${a}/s${b}/f${c}.md`);
  const tq = performance.now();
  for (let i = 0; i < quickPaths.length; i += 10_000) {
    const chunk = quickPaths.slice(i, i + 10_000).map((path) => ({ path, content: `# ${path}\n`, node_type: 'markdown' }));
    await api(server.url, 'POST', `/content/${quickId}/bulk-write`, token, { files: chunk, message: 'quick open seed' });
  }
  console.log(`seeded ${quickPaths.length} files for quick open in ${ms(performance.now() - tq)}`);
  const quick = await quickOpen(browser, server.url, quickId, quickPaths.length);
  const keyMs = quick.keys.map((k) => k.ms);

  type Num = { [K in keyof LoadRun]: LoadRun[K] extends number ? K : never }[keyof LoadRun];
  const med = (k: Num) => median(runs.map((r) => r[k]));
  const all = (k: Num) => runs.map((r) => r[k].toFixed(0)).join(', ');
  const rows: [string, string, string, boolean | null][] = [
    ['1. JS + CSS transferred, compressed bodies (cold cache)', '< 300 KB', `${kb(med('jsCssEncoded'))} (${kb(med('jsCssWire'))} with headers, CDP; ${kb(med('jsCssDecoded'))} uncompressed)`, med('jsCssEncoded') < 300 * 1024],
    ['1. first-contentful-paint entry (the sign-in form)', '', `${ms(med('fcp'))} [${all('fcp')}]`, null],
    ['1. sign-in submit → first tree row painted', '< 1.5 s', `${ms(med('firstRowPainted') - med('submit'))} [${runs.map((r) => (r.firstRowPainted - r.submit).toFixed(0)).join(', ')}]`, median(runs.map((r) => r.firstRowPainted - r.submit)) < 1500],
    ['1. navigation start → first tree row painted (incl. automated sign-in)', '< 1.5 s', `${ms(med('firstRowPainted'))} [${all('firstRowPainted')}] (in DOM ${ms(med('firstRow'))}; form submitted at ${ms(med('submit'))})`, med('firstRowPainted') < 1500],
    ['2. open folder of 1,000: click → first 200 rows painted', '< 200 ms', `${ms(med('openFirstPagePainted'))} [${all('openFirstPagePainted')}] (in DOM ${ms(med('openFirstPage'))})`, med('openFirstPagePainted') < 200],
    ['   of which the first GET tree (limit 200), in the page', '', ms(med('openNetFirst')), null],
    [
      `2. open folder of 1,000: click → all 1,000 painted (${runs[0]!.loadMoreClicks} × Load more, clicked at once)`,
      '(200 ms)',
      `${ms(med('openAllPainted'))} [${all('openAllPainted')}] (in DOM ${ms(med('openAll'))}): ${med('openAllPainted') < 200 ? 'within' : 'over'} 200 ms, not gated (the tree shows 200 rows a page by design)`,
      null,
    ],
    ['   of which the 5 GET tree requests, summed, in the page', '', ms(med('openNetAll')), null],
    ['   GET tree path=big limit=200 / limit=1000 from this process (median of 5)', '', `${ms(tree200)} / ${ms(tree1000)}`, null],
    [`3. another client's write → row in the open tree, root (${LIVE_REPS}×)`, '< 1 s', `p50 ${ms(median(liveRoot))}, max ${ms(Math.max(...liveRoot))}`, Math.max(...liveRoot) < 1000],
    [`3. same, in the open folder of 1,000 (${LIVE_REPS}×)`, '< 1 s', `p50 ${ms(median(liveBig))}, max ${ms(Math.max(...liveBig))}`, Math.max(...liveBig) < 1000],
    [
      '4. deep link to a file of 10,000 (cookie, cache cleared): navigation → text painted',
      '< 1 s',
      `${ms(median(deep.map((d) => d.painted)))} [${deep.map((d) => d.painted.toFixed(0)).join(', ')}] (in DOM ${ms(median(deep.map((d) => d.shown)))})`,
      median(deep.map((d) => d.painted)) < 1000,
    ],
    [
      `5. quick open, ${quickPaths.length.toLocaleString('en')} files: Ctrl+K → every path read`,
      '',
      `${ms(quick.loaded)} (${quick.requests} GET paths, ${kb(quick.bytes)} bodies, ${ms(quick.treeMs)} in requests)`,
      null,
    ],
    [`5. quick open, ${quickPaths.length.toLocaleString('en')} files: keystroke → results painted (${keyMs.length} keys)`, '< 50 ms', `p50 ${ms(median(keyMs))}, max ${ms(Math.max(...keyMs))}`, Math.max(...keyMs) < 50],
  ];
  const assets = await (await fetch(`${server.url}/`)).text();
  console.log(`\nweb dashboard (${[...assets.matchAll(/assets\/([\w.-]+)/g)].map((m) => m[1]).join(', ')}), ${RUNS} cold runs (median [each run]), ${new Date().toISOString()}\n`);
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log(`${'figure'.padEnd(w)}  ${'target'.padEnd(9)}  result  measured`);
  for (const [name, target, measured, ok] of rows) {
    console.log(`${name.padEnd(w)}  ${target.padEnd(9)}  ${ok === null ? '    ' : ok ? 'PASS' : 'FAIL'}    ${measured}`);
    if (ok === false) failed = true;
  }
  console.log(`\nlive, root: ${liveRoot.map((x) => x.toFixed(0)).join(', ')} ms; big/: ${liveBig.map((x) => x.toFixed(0)).join(', ')} ms`);
  const mid = [...runs].sort((a, b) => a.openAllPainted - b.openAllPainted)[runs.length >> 1]!;
  console.log(`opening big/, the median run: click → rows in DOM per step ${mid.steps.map((x) => x.toFixed(0)).join(' + ')} ms; GET tree per step ${mid.net.map((x) => x.toFixed(0)).join(' + ')} ms`);
  console.log(`  main thread over the whole opening: ${Object.entries(mid.mainThread).map(([k, v]) => `${k.replace('Duration', '')} ${v.toFixed(0)} ms`).join(', ')}`);
  console.log(`quick open keystrokes: ${quick.keys.map((k) => `${k.query} ${k.ms.toFixed(0)}`).join(', ')} ms; first result: ${quick.top.join('; ')}`);
  console.log(`took ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await browser?.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
