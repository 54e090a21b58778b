import { createHash } from 'node:crypto';
import type { SourceChange, SourceItem } from '../../runtime/connector.ts';
import type { LinearIssue } from './queries.ts';

/** The source id of an issue's description node (its JSON node has the issue id itself). */
export const descriptionId = (issueId: string): string => `${issueId}:description`;

export const issueJsonPath = (identifier: string): string => `issues/${identifier}.json`;
export const issueMarkdownPath = (identifier: string): string => `issues/${identifier}.md`;

/**
 * The description's version is its text's hash, not the issue's `updatedAt`: a state change at
 * the source then neither rewrites the Markdown node nor makes a local description edit a conflict.
 */
export function descriptionVersion(description: string | null): string {
  return 'sha256:' + createHash('sha256').update(description ?? '').digest('hex').slice(0, 32);
}

/** The JSON node of an issue: what a reader of the project needs, no Linear internals. */
export function issueJson(i: LinearIssue): Record<string, unknown> {
  return {
    id: i.id,
    identifier: i.identifier,
    title: i.title,
    state: i.state ? { name: i.state.name, type: i.state.type } : null,
    assignee: i.assignee ? { id: i.assignee.id, name: i.assignee.name, email: i.assignee.email ?? null } : null,
    priority: i.priority,
    labels: i.labels.nodes.map((l) => ({ id: l.id, name: l.name })),
    project: i.project ? { id: i.project.id, name: i.project.name } : null,
    cycle: i.cycle ? { id: i.cycle.id, number: i.cycle.number, name: i.cycle.name ?? null } : null,
    team: i.team ? { id: i.team.id, key: i.team.key } : null,
    estimate: i.estimate ?? null,
    dueDate: i.dueDate ?? null,
    createdAt: i.createdAt,
    updatedAt: i.updatedAt,
    url: i.url,
  };
}

export function issueItems(i: LinearIssue): SourceItem[] {
  const meta = { teamId: i.team?.id ?? null, identifier: i.identifier };
  return [
    { sourceId: i.id, path: issueJsonPath(i.identifier), type: 'json', content: issueJson(i), sourceVersion: i.updatedAt, meta },
    {
      sourceId: descriptionId(i.id),
      path: issueMarkdownPath(i.identifier),
      type: 'markdown',
      content: i.description ?? '',
      sourceVersion: descriptionVersion(i.description),
      meta,
    },
  ];
}

/** An archived or trashed issue leaves the project (to the trash); a live one is written. */
export function issueChanges(i: LinearIssue): SourceChange[] {
  if (i.archivedAt || i.trashed) return issueDeletes(i.id);
  return issueItems(i).map((item) => ({ kind: 'upsert', item }));
}

export function issueDeletes(issueId: string): SourceChange[] {
  return [
    { kind: 'delete', sourceId: issueId },
    { kind: 'delete', sourceId: descriptionId(issueId) },
  ];
}
