import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

/** Which issues a sync holds: a team (by id or key), a project, or a team's share of a project. */
export interface LinearScope {
  teamId: string | null;
  teamKey: string | null;
  projectId: string | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

export function linearScope(config: SyncConfig): LinearScope {
  return { teamId: text(config.team_id), teamKey: text(config.team_key), projectId: text(config.project_id) };
}

export function validateLinearConfig(config: SyncConfig): void {
  for (const f of ['team_id', 'team_key', 'project_id'] as const) {
    if (config[f] !== undefined && config[f] !== null && typeof config[f] !== 'string') throw invalidField(f, `${f} must be a string`);
  }
  const s = linearScope(config);
  if (s.teamId && s.teamKey) throw invalidField('team_key', 'give team_id or team_key, not both');
  if (!s.teamId && !s.teamKey && !s.projectId) throw invalidField('team_id', 'give team_id or team_key (or project_id) to choose the issues to sync');
  if (s.teamKey && !/^[A-Za-z0-9]{1,10}$/.test(s.teamKey)) throw invalidField('team_key', 'team_key is a team\'s short key, such as ENG');
  if (config.include_comments !== undefined && config.include_comments !== false) {
    throw invalidField('include_comments', 'comments are not synced yet: leave include_comments out or false');
  }
}

/** The IssueFilter of the issues in scope. */
export function scopeFilter(s: LinearScope): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (s.teamId) filter.team = { id: { eq: s.teamId } };
  else if (s.teamKey) filter.team = { key: { eq: s.teamKey } };
  if (s.projectId) filter.project = { id: { eq: s.projectId } };
  return filter;
}

/** The IssueFilter of issues outside the scope (moved to another team or project): they leave the project. */
export function outOfScopeFilter(s: LinearScope): Record<string, unknown> {
  const or: Record<string, unknown>[] = [];
  if (s.teamId) or.push({ team: { id: { neq: s.teamId } } });
  else if (s.teamKey) or.push({ team: { key: { neq: s.teamKey } } });
  if (s.projectId) or.push({ project: { null: true } }, { project: { id: { neq: s.projectId } } });
  return { or };
}
