import { ApiClient } from '../client/apiClient.ts';
import type { PushOp } from '../../sync/pushOps.ts';

export interface PulledFile {
  action: 'upsert' | 'delete';
  node_id: string;
  node_type: string;
  path: string;
  version: number;
  content_hash: string | null;
  size: number;
  content?: string;
}

export interface PullPage {
  run_id: string;
  scope_path: string;
  cursor: number;
  /** The page lists the whole subtree (cursor 0): tracked files it does not list are gone. */
  snapshot: boolean;
  has_more: boolean;
  next_after: string | null;
  files: PulledFile[];
}

export interface PushedFile {
  action: PushOp['action'];
  path: string;
  node_id?: string | null;
  node_type?: string | null;
  version?: number | null;
  content_hash?: string | null;
  deleted?: boolean;
}

/** Node ids per content request: keeps the query string well under HTTP header limits. */
export const FETCH_IDS = 400;

/** The sync routes as the folder client calls them, with the sync connection's own key. */
export class SyncApi {
  readonly client: ApiClient;

  constructor(
    readonly server: string,
    key: string,
    readonly syncId: string,
  ) {
    this.client = new ApiClient({ server, token: key, source: 'flag', stored: null });
  }

  private get base(): string {
    return `/sync/syncs/${encodeURIComponent(this.syncId)}`;
  }

  /** One page of the listing of changes since `cursor` (without content). */
  async pull(q: { cursor: number; until?: number; after?: string; runId?: string }): Promise<PullPage> {
    const { data } = await this.client.get<PullPage>(`${this.base}/pull-files`, {
      cursor: q.cursor,
      until: q.until,
      after: q.after,
      run_id: q.runId,
      content: 0,
      limit: 5000,
    });
    return data;
  }

  /** Current state and content of the given files (at most FETCH_IDS per call). */
  async fetch(nodeIds: string[], runId: string): Promise<PulledFile[]> {
    const { data } = await this.client.get<PullPage>(`${this.base}/pull-files`, { ids: nodeIds.join(','), run_id: runId, limit: nodeIds.length });
    return data.files;
  }

  async push(files: PushOp[], runId: string, message: string): Promise<{ project_version: number | null; files: PushedFile[] }> {
    const { data } = await this.client.post<{ project_version: number | null; files: PushedFile[] }>(`${this.base}/push-file`, {
      run_id: runId,
      message,
      files,
    });
    return data;
  }

  async ack(input: { cursor: number; runId: string; filesDown: number; conflicts: string[]; errors: string[] }): Promise<void> {
    await this.client.post(`${this.base}/ack-pull`, {
      cursor: input.cursor,
      run_id: input.runId,
      files_down: input.filesDown,
      conflicts: input.conflicts,
      errors: input.errors.map((e) => e.slice(0, 10_000)).slice(0, 1000),
    });
  }

  eventsUrl(projectId: string): string {
    return this.client.url('/events', { project_id: projectId });
  }
}
