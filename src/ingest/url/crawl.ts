export interface CrawlOptions {
  /** Link steps from the first page: 0 fetches only it. */
  depth: number;
  maxPages: number;
  /** Follow links to the first page's origin (scheme, host, port) only. */
  sameSite: boolean;
}

/** An address without its fragment: `a#x` and `a#y` are one page. */
export function normalizeUrl(url: URL): URL {
  const u = new URL(url.href);
  u.hash = '';
  return u;
}

/**
 * The frontier of a breadth-first crawl: pages in the order they were found, each address
 * once (after redirects too), no deeper than `depth` link steps, no more than `maxPages`
 * handed out, and with `sameSite` only pages of the first page's origin (or of where it
 * redirected to).
 */
export class Crawl {
  private readonly queue: { url: URL; depth: number }[] = [];
  private readonly seen = new Set<string>();
  private readonly homes = new Set<string>();
  private handedOut = 0;

  constructor(
    start: URL,
    private readonly o: CrawlOptions,
  ) {
    const first = normalizeUrl(start);
    this.homes.add(first.origin);
    this.seen.add(first.href);
    this.queue.push({ url: first, depth: 0 });
  }

  /** The next page to fetch, or null when the crawl is over. */
  next(): { url: URL; depth: number } | null {
    if (this.handedOut >= this.o.maxPages) return null;
    const item = this.queue.shift() ?? null;
    if (item) this.handedOut++;
    return item;
  }

  /**
   * The page at `requested` answered from `final` (after redirects). False when that is another
   * address of a page already fetched or queued: it is not written twice.
   */
  arrivedAt(requested: URL, final: URL, depth: number): boolean {
    const u = normalizeUrl(final);
    if (u.href === requested.href) return true;
    if (this.seen.has(u.href)) return false;
    this.seen.add(u.href);
    if (depth === 0) this.homes.add(u.origin);
    return true;
  }

  /** Links of a page found at `depth`. */
  add(links: URL[], depth: number): void {
    if (depth >= this.o.depth) return;
    for (const link of links) {
      const u = normalizeUrl(link);
      if (this.seen.has(u.href)) continue;
      if (this.o.sameSite && !this.homes.has(u.origin)) continue;
      this.seen.add(u.href);
      this.queue.push({ url: u, depth: depth + 1 });
    }
  }

  /** How many pages the crawl will have fetched at most, as far as it knows now. */
  expected(): number {
    return Math.min(this.o.maxPages, this.handedOut + this.queue.length);
  }

  fetched(): number {
    return this.handedOut;
  }
}
