import type { ContentStore } from '../../content/contentStore.ts';
import type { Changelog } from '../../events/changelog.ts';
import type { ConnectorContext, LocalChange, PlatformConnector } from './connector.ts';
import type { ItemRow } from './itemStore.ts';
import { localChanges, type PendingChange } from './localChanges.ts';

export interface PushStageResult {
  pushed: number;
  /** Rows to write after the push (new source versions, new items). */
  rows: ItemRow[];
  removed: string[];
  /** Why changes were refused by the source, one message each (the run still succeeds). */
  refused: string[];
  /** The project commit number up to which local changes were considered. */
  localCursor: number;
}

export interface PushScope {
  connector: PlatformConnector;
  content: ContentStore;
  changelog: Changelog;
  projectId: string;
  syncId: string;
  folder: string;
  rows: Map<string, ItemRow>;
  /** Where the previous run stopped considering local changes (null: the sync never ran). */
  since: number | null;
}

/**
 * Sends the changes made here to the sync's nodes since the last run back to the source, as far
 * as the connector's capabilities allow (the others stay local). Runs after the pull, so that a
 * node changed on both sides has already been settled as a conflict (the source won) and is not
 * sent back.
 */
export async function pushStage(scope: PushScope, ctx: ConnectorContext): Promise<PushStageResult> {
  const upTo = scope.changelog.latest(scope.projectId);
  const result: PushStageResult = { pushed: 0, rows: [], removed: [], refused: [], localCursor: upTo };
  const can = scope.connector.spec.capabilities?.push;
  // The first run only notes where it starts: what the folder held before is not news to the source.
  if (scope.since === null || !scope.connector.push || !can || upTo <= scope.since) return result;
  const entries = scope.changelog.between(scope.projectId, scope.since, upTo);
  const pending = (await localChanges({ content: scope.content, projectId: scope.projectId, syncId: scope.syncId, folder: scope.folder, rows: scope.rows }, entries)).filter(
    (p) => can[p.change.kind],
  );
  if (pending.length === 0) return result;
  const outcomes = await scope.connector.push(ctx, pending.map((p) => p.change));
  pending.forEach((p, i) => {
    const outcome = outcomes[i];
    if (!outcome) return void result.refused.push(`${p.path}: not pushed (the connector gave no outcome)`);
    if (!outcome.ok) return void result.refused.push(`${p.path}: ${outcome.message}`);
    result.pushed++;
    applyOutcome(scope, p, outcome, result);
  });
  return result;
}

function applyOutcome(scope: PushScope, p: PendingChange, outcome: { sourceId: string; sourceVersion: string; path?: string; meta?: Record<string, unknown> }, result: PushStageResult): void {
  const change: LocalChange = p.change;
  if (change.kind === 'delete') {
    result.removed.push(change.sourceId);
    return;
  }
  const node = p.node!;
  const previous = change.kind === 'update' ? scope.rows.get(change.sourceId) : undefined;
  result.rows.push({
    sourceId: outcome.sourceId,
    nodeId: node.id,
    nodePath: node.path,
    path: outcome.path ?? change.path,
    sourceVersion: outcome.sourceVersion,
    // What we sent is what the source now has: the node is in step until it changes again.
    contentHash: node.contentHash,
    meta: { ...(previous?.meta ?? {}), ...(outcome.meta ?? {}) },
  });
}
