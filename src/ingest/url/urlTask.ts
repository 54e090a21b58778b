import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { joinPath } from '../../content/paths.ts';
import { redactUrl } from '../../logging/redact.ts';
import type { Progress } from '../converters/converter.ts';
import { plannedAt, type PlannedNode } from '../queue/resultWriter.ts';
import type { SourceConverter } from '../queue/sourceConverter.ts';
import { TaskFailure } from '../queue/taskFailure.ts';
import type { TaskRecord, UrlInput } from '../queue/taskTypes.ts';
import { Crawl } from './crawl.ts';
import { fetchToFile } from './fetchPage.ts';
import { extractLinks, LINK_SCAN_BYTES } from './links.ts';
import { pagePlace, uniquePath } from './pageNames.ts';

export interface UrlTaskDeps {
  converter: SourceConverter;
  /** Largest answer fetched, bytes. */
  maxBytes: number;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface TaskRun {
  /** The task's temporary folder. */
  dir: string;
  signal: AbortSignal;
  progress(p: Progress): void;
}

/**
 * A URL submission: the page, and with `depth` the pages it links to, breadth first, at most
 * `max_pages`, each fetched through the outbound guard and converted in the pool (HTML by the
 * web-page converter; PDF, CSV, … by the file converters). Each page becomes a node named after
 * its address (pageNames.ts). The first page failing fails the task; a later page failing
 * (an error status, a refused address, a corrupt file) is a warning, and the crawl goes on.
 * Not done: robots.txt is not read.
 */
export async function runUrlTask(d: UrlTaskDeps, task: TaskRecord, run: TaskRun): Promise<{ nodes: PlannedNode[]; warnings: string[] }> {
  const input = task.input as UrlInput;
  const crawl = new Crawl(new URL(input.url), { depth: input.depth, maxPages: input.max_pages, sameSite: input.same_site });
  const nodes: PlannedNode[] = [];
  const warnings: string[] = [];
  const taken = new Set<string>();
  let home: string | null = null;
  const report = (done = crawl.fetched()) => run.progress({ done, total: crawl.expected(), unit: 'pages' });
  report(0);
  for (let item = crawl.next(), n = 1; item; item = crawl.next(), n++) {
    const first = n === 1;
    const address = redactUrl(item.url.href);
    const fail = (e: unknown): void => {
      if (run.signal.aborted) throw e;
      const message = e instanceof Error ? e.message : String(e);
      if (first) throw e instanceof TaskFailure || (e as { code?: unknown }).code !== undefined ? e : new TaskFailure('fetch_failed', message);
      warnings.push(message.includes(address) ? message : `${address}: ${message}`);
    };
    const file = join(run.dir, `page-${n}`);
    let page;
    try {
      page = await fetchToFile(item.url, { file, maxBytes: d.maxBytes, timeoutMs: d.timeoutMs, allowPrivate: d.allowPrivate, signal: run.signal });
    } catch (e) {
      fail(e);
      report();
      continue;
    }
    if (!crawl.arrivedAt(item.url, page.url, item.depth)) {
      report();
      continue;
    }
    home ??= page.url.origin;
    const html = await isHtml(file, page.contentType);
    if (html) crawl.add(extractLinks(await head(file), page.url), item.depth);
    const place = pagePlace(page.url, home, html, page.contentType);
    try {
      const out = await d.converter.convert(task, { file, name: place.sourceName, mimeType: page.contentType, sourceUrl: page.url.href }, run.signal, () => {});
      const folder = place.folder === '' ? task.target_path : joinPath(task.target_path, place.folder);
      const named = out.nodes.map((n) => n.name);
      for (const node of out.nodes) {
        const path = uniquePath(joinPath(folder, node.name), taken);
        taken.add(path);
        nodes.push(plannedAt(node, path));
      }
      // The page as fetched, unless the result already is it (raw, or a format stored unchanged).
      if (task.keep_original && !named.includes(place.sourceName)) {
        const path = uniquePath(joinPath(folder, place.sourceName), taken);
        taken.add(path);
        nodes.push({ path, type: 'file', file });
      }
      warnings.push(...out.warnings.map((w) => `${redactUrl(page.url.href)}: ${w}`));
    } catch (e) {
      fail(e);
    }
    report();
  }
  return { nodes, warnings };
}

async function head(file: string): Promise<string> {
  const fh = await open(file);
  try {
    const buf = Buffer.alloc(LINK_SCAN_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** By the media type; without one, by how the body starts. */
async function isHtml(file: string, contentType: string | null): Promise<boolean> {
  const mime = contentType?.split(';')[0]!.trim().toLowerCase();
  if (mime) return mime === 'text/html' || mime === 'application/xhtml+xml';
  const start = (await head(file)).slice(0, 512).trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html');
}
