import type { NodeType } from '../content/contentStore.ts';
import { NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import type { ChangeEntry, Changelog } from '../events/changelog.ts';
import { scopedEntry } from '../events/scopedChanges.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { historyScope } from './historyScope.ts';

export type PathOperation = 'added' | 'modified' | 'moved' | 'deleted';

/** What happened to one node between two project versions, overall. */
export interface PathChange {
  path: string;
  /** Where it was, for a move. */
  oldPath: string | null;
  operation: PathOperation;
  nodeId: string;
  type: NodeType;
}

/**
 * Each node changed between project versions v1 < v2, once, with what happened to it overall,
 * as seen from the grant's scope (or the folder `within` it); sorted by path. A node created and
 * deleted within the range is left out.
 */
export function diffProject(
  d: { changelog: Pick<Changelog, 'latest' | 'between'> },
  g: ContentGrant,
  input: { v1: number; v2: number; within?: string },
): { v1: number; v2: number; changes: PathChange[] } {
  const { v1, v2 } = input;
  const scope = historyScope(g, input.within);
  const current = d.changelog.latest(g.projectId);
  for (const [field, v] of [['v1', v1], ['v2', v2]] as const) {
    if (v > current) throw new NotFoundError(`project version ${v} does not exist`, { [field]: v });
  }
  if (v1 >= v2) throw new ValidationError('v1 must be lower than v2', { v1, v2 });
  const byNode = new Map<string, ChangeEntry[]>();
  for (const raw of d.changelog.between(g.projectId, v1, v2)) {
    const e = scopedEntry(scope, raw);
    if (!e) continue;
    const list = byNode.get(e.nodeId) ?? [];
    list.push(e);
    byNode.set(e.nodeId, list);
  }
  const changes = [...byNode.values()].map(overall).filter((c): c is PathChange => c !== null);
  return { v1, v2, changes: changes.sort((a, b) => a.path.localeCompare(b.path)) };
}

function overall(entries: ChangeEntry[]): PathChange | null {
  const first = entries[0]!;
  const last = entries[entries.length - 1]!;
  const before = first.oldPath ?? (first.action === 'create' ? null : first.path);
  const after = last.action === 'delete' || last.path.startsWith('.trash/') ? null : last.path;
  if (before === null && after === null) return null; // created and deleted within the range
  let operation: PathOperation;
  if (before === null || first.action === 'create') operation = 'added';
  else if (after === null) operation = 'deleted';
  else if (before !== after) operation = 'moved';
  else operation = 'modified';
  return { path: after ?? before ?? '', oldPath: operation === 'moved' ? before : null, operation, nodeId: first.nodeId, type: last.nodeType as NodeType };
}
