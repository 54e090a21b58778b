import type { ContentStore } from '../../content/contentStore.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import type { Changelog } from '../../events/changelog.ts';
import type { WriteTimeGrants } from '../../policies/writeTimeGrant.ts';
import type { SyncStateRecord } from '../../sync/syncRecords.ts';
import { actorOfSync } from '../../sync/syncs.ts';
import { planPage, type PagePlan } from './applyPage.ts';
import type { ConnectorContext, PlatformConnector, SyncConfig } from './connector.ts';
import type { CredentialSource } from './credentials.ts';
import type { ConvertInput, ConvertOutput } from '../../ingest/converters/converter.ts';
import { syncFolder } from './itemPaths.ts';
import { KnownItemMap, type ItemRow, type ItemStore } from './itemStore.ts';
import { pushStage } from './pushStage.ts';
import { createSourceHttp } from './sourceHttp.ts';
import { CursorMoved, type PageRecord, type PlatformRunStore, type PlatformRunSummary } from './platformRunStore.ts';
import { pathsOf, requireWrite, runError } from './writeGrant.ts';

export interface RunDeps {
  runs: PlatformRunStore;
  items: ItemStore;
  content: ContentStore;
  changelog: Changelog;
  credentials: CredentialSource;
  /** The policy asked again at each write, with the sync's key as it stands then. */
  grants: Pick<WriteTimeGrants, 'require'>;
  apiBase: (provider: string) => string;
  allowPrivate: () => boolean;
  maxContentBytes: () => number;
  /** The ingestion converters, in their own processes. */
  convert: (input: ConvertInput, signal?: AbortSignal) => Promise<ConvertOutput>;
  /** Waits of rate limits and backoff (tests make them instant). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface RunInput {
  runId: string;
  state: SyncStateRecord;
  connection: ConnectionRecord;
  connector: PlatformConnector;
  signal: AbortSignal;
}

/** The trailer of a page's commit: `<sync id>/<cursor, percent-encoded>`, the sync id alone for a null cursor. */
export const SYNC_PAGE_TRAILER = 'Cns-Sync-Page';

/**
 * One run of a platform sync: pull page by page, each page ONE commit, then its item rows and
 * the source cursor in one metadata transaction (the two stores share no transaction: a page
 * committed before a crash is completed by the next run, see resumePage), then push the changes
 * made here since the last run. The sync writes as its key: the policy is asked again before the
 * run contacts the source, right before each page's commit and before the push, so a key revoked,
 * deleted or narrowed meanwhile stops the run at the next write (failed, its error led by the
 * policy's code). Throws only when its run cannot be begun (the metadata store failed); what
 * failed after is in the summary (`needsReauth` set when the credential is gone, for the runtime
 * to pause the sync).
 */
export async function runSync(d: RunDeps, input: RunInput): Promise<PlatformRunSummary & { needsReauth: boolean }> {
  const { state, connection, connector, signal } = input;
  const projectId = state.project_id;
  const provider = connector.spec.provider;
  const config = JSON.parse(connection.config) as SyncConfig;
  const counters = { httpCalls: 0, rateLimitedMs: 0 };
  const summary: PlatformRunSummary & { needsReauth: boolean } = {
    created: 0,
    updated: 0,
    deleted: 0,
    pushed: 0,
    conflicts: [],
    warnings: [],
    error: null,
    cursorAfter: state.source_cursor,
    projectVersion: d.changelog.latest(projectId),
    httpCalls: 0,
    rateLimitedMs: 0,
    needsReauth: false,
  };
  await d.runs.beginRun(input.runId, state.source_cursor, state.local_cursor ?? summary.projectVersion);
  try {
    const folder = syncFolder(config, provider);
    // Every check covers the sync's folder: a key narrowed below it no longer does this sync's work.
    const mayWrite = (paths: readonly string[]) => requireWrite(d.grants, connection.id, projectId, [folder, ...paths]);
    await mayWrite([]);
    let cursor = await resumePage(d, state);
    summary.cursorAfter = cursor;
    const rows = await resolveNodes(d, projectId, state.sync_id, await d.items.load(state.sync_id));
    const owners = new Map<string, string>();
    for (const r of rows.values()) if (r.nodeId) owners.set(r.nodeId, r.sourceId);
    const actor = actorOfSync(connection);
    const ctx: ConnectorContext = {
      syncId: state.sync_id,
      projectId,
      config,
      known: new KnownItemMap(rows),
      http: createSourceHttp({
        connector,
        credentials: d.credentials,
        projectId,
        apiBase: d.apiBase(provider),
        allowPrivate: d.allowPrivate(),
        signal,
        counters,
        sleep: d.sleep,
      }),
      apiBase: d.apiBase(provider),
      convert: (i) => d.convert(i, signal),
      runMessage: `sync ${provider}: ${connection.name} (run ${input.runId})`,
      signal,
    };
    // The credential is asked for before the source is: a missing one is needs_reauth at once.
    await d.credentials.get(projectId, provider);

    for await (const page of connector.pull(ctx, cursor)) {
      signal.throwIfAborted();
      const plan = planPage({ content: d.content, projectId, folder, rows, owners, maxContentBytes: d.maxContentBytes() }, page.changes);
      await commitPage(d, { state, actor, provider, plan, from: cursor, cursor: page.cursor, rows, owners, mayWrite });
      cursor = page.cursor;
      summary.created += plan.created;
      summary.updated += plan.updated;
      summary.deleted += plan.deleted;
      summary.conflicts.push(...plan.conflicts);
      summary.warnings.push(...plan.skipped);
      summary.cursorAfter = page.cursor;
    }

    signal.throwIfAborted();
    // The push reads the folder as the sync and sends it to the source: the key must still reach it.
    await mayWrite([]);
    const pushed = await pushStage(
      { connector, content: d.content, changelog: d.changelog, projectId, syncId: state.sync_id, folder, rows, since: state.local_cursor },
      ctx,
    );
    await d.runs.recordPush(state.sync_id, { rows: pushed.rows, removed: pushed.removed, localCursor: pushed.localCursor });
    summary.pushed = pushed.pushed;
    summary.warnings.push(...pushed.refused);
  } catch (err) {
    // A lost grant pauses the sync (which aborts the run): it is still why the run failed.
    const needsReauth = (err as { code?: unknown }).code === 'NEEDS_REAUTH';
    if (signal.aborted && !needsReauth) summary.interrupted = true;
    else {
      summary.error = runError(err);
      summary.needsReauth = needsReauth;
      // A connector that finds the grant refused in its own way (an error inside a 200 answer) marks the connection too.
      if (needsReauth) await d.credentials.markNeedsReauth?.(projectId, provider);
    }
  }
  summary.httpCalls = counters.httpCalls;
  summary.rateLimitedMs = counters.rateLimitedMs;
  summary.projectVersion = d.changelog.latest(projectId);
  return summary;
}

/**
 * One page: its journal, its commit (carrying the page in its trailer), then its item rows and
 * the cursor moved from `from` by compare-and-set, in one metadata transaction. The write-time
 * check runs in the project's serialized section right before the commit (CommitOptions.check).
 */
async function commitPage(
  d: RunDeps,
  p: {
    state: SyncStateRecord;
    actor: ReturnType<typeof actorOfSync>;
    provider: string;
    plan: PagePlan;
    /** The stored cursor the page was pulled from. */
    from: string | null;
    cursor: string | null;
    rows: Map<string, ItemRow>;
    owners: Map<string, string>;
    /** The write-time check, run inside the commit's serialized section. */
    mayWrite: (paths: readonly string[]) => Promise<void>;
  },
): Promise<void> {
  const { state, plan } = p;
  const syncId = state.sync_id;
  const projectId = state.project_id;
  let created = new Map<string, string>();
  if (plan.mutations.length > 0) {
    const page: PageRecord = { from: p.from, cursor: p.cursor, rows: plan.rows, removed: plan.removed, after: d.changelog.latest(projectId) };
    if (!(await d.runs.journalPage(syncId, page))) throw new CursorMoved(syncId);
    const result = await d.content.commit(projectId, p.actor, plan.mutations, {
      message: pageMessage(p.provider, plan),
      check: () => p.mayWrite(pathsOf(plan.mutations)),
      trailers: [pageTrailer(syncId, p.cursor)],
    });
    created = new Map(result.nodes.map((n) => [n.path, n.id]));
  } else {
    await p.mayWrite([]);
  }
  // Node ids of the nodes the commit created are known now: stored with the rows.
  for (const row of plan.rows) if (row.nodeId === null) row.nodeId = created.get(row.nodePath) ?? null;
  await d.runs.recordPage(syncId, { from: p.from, cursor: p.cursor, rows: plan.rows, removed: plan.removed });
  // The run's own map follows.
  for (const row of plan.rows) {
    const previous = p.rows.get(row.sourceId);
    if (previous?.nodeId && previous.nodeId !== row.nodeId) p.owners.delete(previous.nodeId);
    p.rows.set(row.sourceId, row);
    if (row.nodeId) p.owners.set(row.nodeId, row.sourceId);
  }
  for (const id of plan.removed) {
    const previous = p.rows.get(id);
    if (previous?.nodeId) p.owners.delete(previous.nodeId);
    p.rows.delete(id);
  }
}

export function pageTrailer(syncId: string, cursor: string | null): string {
  return `${SYNC_PAGE_TRAILER}: ${syncId}${cursor === null ? '' : `/${encodeURIComponent(cursor)}`}`;
}

/** The cursor a page trailer's value names for `syncId`; undefined when it names another sync (or is not one). */
export function cursorOfTrailer(value: string, syncId: string): string | null | undefined {
  if (value === syncId) return null;
  if (!value.startsWith(`${syncId}/`)) return undefined;
  try {
    return decodeURIComponent(value.slice(syncId.length + 1));
  } catch {
    return undefined;
  }
}

/**
 * A page journaled before a crash (or a failed metadata step): when the sync's last commit since
 * the journal carries that page, its items and cursor are stored now from the journal, so the
 * page is neither fetched nor written again; when not, its commit was never made, and the page is
 * pulled again. Answers the cursor the run pulls from.
 */
async function resumePage(d: RunDeps, state: SyncStateRecord): Promise<string | null> {
  const pending = state.pending_page;
  if (pending === null) return state.source_cursor;
  const page = JSON.parse(pending) as PageRecord;
  const committed = await lastPageCommitted(d, state.project_id, state.sync_id, page.after);
  if (committed !== undefined && committed === page.cursor && page.from === state.source_cursor) {
    await d.runs.recordPage(state.sync_id, page);
    return page.cursor;
  }
  await d.runs.dropPendingPage(state.sync_id, pending);
  return state.source_cursor;
}

/** The cursor named by the page trailer of the sync's last commit after project commit `after`; undefined when there is none. */
async function lastPageCommitted(d: RunDeps, projectId: string, syncId: string, after: number): Promise<string | null | undefined> {
  let last: string | null = null;
  for (let at = after; ; ) {
    const commits = d.content.commitsAfter(projectId, at, 200);
    if (commits.length === 0) break;
    for (const c of commits) if (c.actor.type === 'sync' && c.actor.id === syncId) last = c.commitId;
    at = commits[commits.length - 1]!.projectVersion;
  }
  if (last === null) return undefined;
  const value = await d.content.commitTrailer(projectId, last, SYNC_PAGE_TRAILER);
  return value === null ? undefined : cursorOfTrailer(value, syncId);
}

/** Rows stored before their node ids were known (a page replayed from its journal) find them by path. */
async function resolveNodes(d: RunDeps, projectId: string, syncId: string, rows: Map<string, ItemRow>): Promise<Map<string, ItemRow>> {
  const filled: ItemRow[] = [];
  for (const row of rows.values()) {
    if (row.nodeId !== null) continue;
    const node = d.content.findByPath(projectId, row.nodePath);
    if (node) {
      row.nodeId = node.id;
      filled.push(row);
    }
  }
  if (filled.length > 0) await d.items.put(syncId, filled);
  return rows;
}

function pageMessage(provider: string, plan: PagePlan): string {
  const parts = [
    plan.created ? `${plan.created} created` : '',
    plan.updated ? `${plan.updated} updated` : '',
    plan.deleted ? `${plan.deleted} to the trash` : '',
  ].filter(Boolean);
  return `sync ${provider}: ${parts.length ? parts.join(', ') : 'items moved'}`;
}
