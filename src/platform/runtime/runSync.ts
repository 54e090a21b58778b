import type { ContentStore } from '../../content/contentStore.ts';
import { inTransaction, type Db } from '../../db/database.ts';
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
import type { PlatformRunStore, PlatformRunSummary } from './platformRunStore.ts';
import { pathsOf, requireWrite, runError } from './writeGrant.ts';

export interface RunDeps {
  db: Db;
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

/**
 * One run of a platform sync: pull page by page, each page ONE commit written together with
 * the item map and the source cursor (so a crash resumes from the last committed page), then
 * push the changes made here since the last run. The sync writes as its key: the policy is asked
 * again before the run contacts the source, inside each page's commit and before the push, so a
 * key revoked, deleted or narrowed meanwhile stops the run at the next write (failed, its error
 * led by the policy's code). Throws nothing: what failed is in the summary (`needsReauth` set
 * when the credential is gone, for the runtime to pause the sync).
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
  d.runs.beginRun(input.runId, state.source_cursor, state.local_cursor ?? summary.projectVersion);
  try {
    const folder = syncFolder(config, provider);
    // Every check covers the sync's folder: a key narrowed below it no longer does this sync's work.
    const mayWrite = (paths: readonly string[]) => requireWrite(d.grants, connection.id, projectId, [folder, ...paths]);
    mayWrite([]);
    const rows = resolveNodes(d, projectId, state.sync_id, d.items.load(state.sync_id));
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

    for await (const page of connector.pull(ctx, state.source_cursor)) {
      signal.throwIfAborted();
      const plan = planPage({ content: d.content, projectId, folder, rows, owners, maxContentBytes: d.maxContentBytes() }, page.changes);
      await commitPage(d, { state, actor, provider, plan, cursor: page.cursor, rows, owners, mayWrite });
      summary.created += plan.created;
      summary.updated += plan.updated;
      summary.deleted += plan.deleted;
      summary.conflicts.push(...plan.conflicts);
      summary.warnings.push(...plan.skipped);
      summary.cursorAfter = page.cursor;
    }

    signal.throwIfAborted();
    // The push reads the folder as the sync and sends it to the source: the key must still reach it.
    mayWrite([]);
    const pushed = await pushStage(
      { connector, content: d.content, changelog: d.changelog, projectId, syncId: state.sync_id, folder, rows, since: state.local_cursor },
      ctx,
    );
    inTransaction(d.db, () => {
      d.items.put(state.sync_id, pushed.rows);
      d.items.remove(state.sync_id, pushed.removed);
      d.runs.setLocalCursor(state.sync_id, pushed.localCursor);
    });
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

/** One page: its commit, the item rows and the cursor in the same SQLite transaction. */
async function commitPage(
  d: RunDeps,
  p: {
    state: SyncStateRecord;
    actor: ReturnType<typeof actorOfSync>;
    provider: string;
    plan: PagePlan;
    cursor: string | null;
    rows: Map<string, ItemRow>;
    owners: Map<string, string>;
    /** The write-time check, run inside the commit's serialized section. */
    mayWrite: (paths: readonly string[]) => void;
  },
): Promise<void> {
  const { state, plan } = p;
  const syncId = state.sync_id;
  const record = () => {
    p.mayWrite(pathsOf(plan.mutations));
    d.items.put(syncId, plan.rows);
    d.items.remove(syncId, plan.removed);
    d.runs.setSourceCursor(syncId, p.cursor);
  };
  let created = new Map<string, string>();
  if (plan.mutations.length > 0) {
    const result = await d.content.commit(state.project_id, p.actor, plan.mutations, { message: pageMessage(p.provider, plan), guard: record });
    created = new Map(result.nodes.map((n) => [n.path, n.id]));
  } else {
    inTransaction(d.db, record);
  }
  // The run's own map follows: node ids of created nodes are filled in (and stored).
  const filled: ItemRow[] = [];
  for (const row of plan.rows) {
    if (row.nodeId === null) {
      row.nodeId = created.get(row.nodePath) ?? null;
      if (row.nodeId) filled.push(row);
    }
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
  if (filled.length > 0) inTransaction(d.db, () => d.items.put(syncId, filled));
}

/** Rows stored before their node ids were known (a crash right after a commit) find them by path. */
function resolveNodes(d: RunDeps, projectId: string, syncId: string, rows: Map<string, ItemRow>): Map<string, ItemRow> {
  const filled: ItemRow[] = [];
  for (const row of rows.values()) {
    if (row.nodeId !== null) continue;
    const node = d.content.findByPath(projectId, row.nodePath);
    if (node) {
      row.nodeId = node.id;
      filled.push(row);
    }
  }
  if (filled.length > 0) inTransaction(d.db, () => d.items.put(syncId, filled));
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
