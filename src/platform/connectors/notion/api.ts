import type { SourceHttp } from '../../runtime/connector.ts';
import type { Block, BlockNode, Database, ListAnswer, Page } from './types.ts';

/** Notion's public API; `CNS_NOTION_API_URL` replaces it. */
export const NOTION_API_BASE = 'https://api.notion.com';
export const NOTION_VERSION = '2022-06-28';
/** Notion's largest page of results. */
const PAGE_SIZE = 100;

/** The calls of Notion's API the connector makes, over the run's SourceHttp. */
export class NotionApi {
  constructor(private readonly http: SourceHttp) {}

  /** Pages the integration can see, newest edit first, one answer page at a time. */
  async *searchPages(): AsyncGenerator<Page[]> {
    let cursor: string | undefined;
    do {
      const res = await this.http.request({
        method: 'POST',
        url: '/v1/search',
        json: {
          filter: { property: 'object', value: 'page' },
          sort: { direction: 'descending', timestamp: 'last_edited_time' },
          page_size: PAGE_SIZE,
          ...(cursor ? { start_cursor: cursor } : {}),
        },
      });
      const answer = res.json<ListAnswer<Page>>();
      yield answer.results.filter((r) => r.object === 'page');
      cursor = answer.has_more && answer.next_cursor ? answer.next_cursor : undefined;
    } while (cursor);
  }

  /** A page, or null when it is gone or no longer shared with the integration (404). */
  async page(id: string): Promise<Page | null> {
    const res = await this.http.request({ url: `/v1/pages/${id}`, accept: [404] });
    return res.status === 404 ? null : res.json<Page>();
  }

  /** A block (to find the page a block-parented page sits in), or null when gone. */
  async block(id: string): Promise<Block | null> {
    const res = await this.http.request({ url: `/v1/blocks/${id}`, accept: [404] });
    return res.status === 404 ? null : res.json<Block>();
  }

  async database(id: string): Promise<Database> {
    return (await this.http.request({ url: `/v1/databases/${id}` })).json<Database>();
  }

  /** Rows of a database, oldest edit first, edited on or after `since` when given. */
  async *queryDatabase(id: string, since: string | null): AsyncGenerator<Page[]> {
    let cursor: string | undefined;
    do {
      const res = await this.http.request({
        method: 'POST',
        url: `/v1/databases/${id}/query`,
        json: {
          ...(since ? { filter: { timestamp: 'last_edited_time', last_edited_time: { on_or_after: since } } } : {}),
          sorts: [{ timestamp: 'last_edited_time', direction: 'ascending' }],
          page_size: PAGE_SIZE,
          ...(cursor ? { start_cursor: cursor } : {}),
        },
      });
      const answer = res.json<ListAnswer<Page>>();
      yield answer.results;
      cursor = answer.has_more && answer.next_cursor ? answer.next_cursor : undefined;
    } while (cursor);
  }

  /** The direct children of a block or page, every answer page. */
  async children(id: string): Promise<Block[]> {
    const out: Block[] = [];
    let cursor: string | undefined;
    do {
      const res = await this.http.request({ url: `/v1/blocks/${id}/children`, query: { page_size: PAGE_SIZE, start_cursor: cursor } });
      const answer = res.json<ListAnswer<Block>>();
      out.push(...answer.results);
      cursor = answer.has_more && answer.next_cursor ? answer.next_cursor : undefined;
    } while (cursor);
    return out;
  }

  /**
   * A page's content: its blocks and, for those with `has_children`, theirs, to any depth.
   * Child pages and databases are not descended into: they are items of their own.
   */
  async blockTree(id: string): Promise<BlockNode[]> {
    const blocks = await this.children(id);
    const nodes: BlockNode[] = [];
    for (const block of blocks) {
      const descend = block.has_children && block.type !== 'child_page' && block.type !== 'child_database';
      nodes.push({ block, children: descend ? await this.blockTree(block.id) : [] });
    }
    return nodes;
  }

  /** Appends blocks under `parent` (after the block `after` when given); the created first-level blocks. */
  async append(parent: string, children: unknown[], after?: string): Promise<Block[]> {
    const res = await this.http.request({ method: 'PATCH', url: `/v1/blocks/${parent}/children`, json: { children, ...(after ? { after } : {}) } });
    return res.json<ListAnswer<Block>>().results;
  }

  async deleteBlock(id: string): Promise<void> {
    // Already gone (deleted in Notion meanwhile) is what we wanted.
    await this.http.request({ method: 'DELETE', url: `/v1/blocks/${id}`, accept: [404] });
  }

  async updatePage(id: string, properties: Record<string, unknown>): Promise<Page> {
    return (await this.http.request({ method: 'PATCH', url: `/v1/pages/${id}`, json: { properties } })).json<Page>();
  }
}
