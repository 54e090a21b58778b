import type { SourceItem } from '../../runtime/connector.ts';
import type { Issue } from './api.ts';

/** Folders of the sync holding issues and pull requests (repository files under them are not synced then). */
export const ISSUES_FOLDER = '_issues';
export const PULLS_FOLDER = '_pulls';

export function isPull(issue: Issue): boolean {
  return issue.pull_request !== undefined;
}

/** `issue:<id>` (GitHub's id, which a transfer or renumbering does not reuse) → `_issues/<number>.md` or `_pulls/<number>.md`. */
export function issueItem(issue: Issue): SourceItem {
  return {
    sourceId: `issue:${issue.id}`,
    path: `${isPull(issue) ? PULLS_FOLDER : ISSUES_FOLDER}/${issue.number}.md`,
    type: 'markdown',
    content: issueMarkdown(issue),
    sourceVersion: issue.updated_at,
    meta: { kind: 'issue', number: issue.number },
  };
}

/** The issue's body under YAML front matter with its facts (strings JSON-quoted, which YAML reads as its own double-quoted form). */
export function issueMarkdown(issue: Issue): string {
  const q = (s: string) => JSON.stringify(s);
  const list = (xs: string[]) => `[${xs.map(q).join(', ')}]`;
  const labels = issue.labels.map((l) => (typeof l === 'string' ? l : l.name));
  const lines = [
    '---',
    `number: ${issue.number}`,
    `title: ${q(issue.title)}`,
    `state: ${issue.state}`,
    ...(isPull(issue) ? [`draft: ${issue.draft === true}`, `merged: ${issue.pull_request?.merged_at ? issue.pull_request.merged_at : 'null'}`] : []),
    `author: ${issue.user ? q(issue.user.login) : 'null'}`,
    `labels: ${list(labels)}`,
    `assignees: ${list((issue.assignees ?? []).map((a) => a.login))}`,
    `created: ${issue.created_at}`,
    `updated: ${issue.updated_at}`,
    `closed: ${issue.closed_at ?? 'null'}`,
    `url: ${issue.html_url}`,
    '---',
    '',
  ];
  const body = (issue.body ?? '').replace(/\r\n/g, '\n');
  return `${lines.join('\n')}${body}${body.endsWith('\n') || body === '' ? '' : '\n'}`;
}
