import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Builds the web dashboard (web/ → web/dist) when the build is missing or older than its
 * sources, so `npm start` and `npm test` need no second command (they run this first, as
 * `prestart`/`pretest`), and a fresh build costs nothing when nothing changed.
 */
const WEB = fileURLToPath(new URL('../web', import.meta.url));
const DIST_INDEX = join(WEB, 'dist', 'index.html');
/** Relative to web/; the front matter modules are shared with the server's published pages. */
const SOURCES = ['index.html', 'vite.config.ts', 'src', 'public', '../src/util/frontMatter.ts', '../src/util/frontMatterFence.ts'];

function newestSourceTime(): number {
  let newest = 0;
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    const info = statSync(path);
    if (info.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, info.mtimeMs);
  };
  for (const s of SOURCES) visit(join(WEB, s));
  return newest;
}

export function webBuildIsStale(): boolean {
  return !existsSync(DIST_INDEX) || statSync(DIST_INDEX).mtimeMs < newestSourceTime();
}

export async function buildWeb(logLevel: 'warn' | 'info' = 'warn'): Promise<void> {
  const { build } = await import('vite');
  await build({ root: WEB, configFile: join(WEB, 'vite.config.ts'), logLevel });
  precompress(join(WEB, 'dist', 'assets'));
}

export async function ensureWebBuilt(): Promise<void> {
  if (!webBuildIsStale()) return;
  await withBuildLock(async () => {
    if (webBuildIsStale()) await buildWeb(); // another process may have built it while we waited
  });
}

/**
 * One build at a time across processes (test files run in parallel workers): Vite empties
 * web/dist first, so a second build would pull files from under a server already serving them.
 */
async function withBuildLock(build: () => Promise<void>): Promise<void> {
  const lock = join(WEB, '.build-lock');
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock older than any build is left over from a killed process.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 120_000) rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    await build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Brotli and gzip copies of the hashed text assets, made once here at the highest levels, so
 * the server sends compressed bytes without compressing on every request (webAssets.ts).
 */
function precompress(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!/\.(js|css|svg|json)$/.test(name)) continue;
    const bytes = readFileSync(join(dir, name));
    writeFileSync(join(dir, `${name}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    writeFileSync(join(dir, `${name}.gz`), gzipSync(bytes, { level: 9 }));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--force')) await buildWeb('info');
  else await ensureWebBuilt();
}
