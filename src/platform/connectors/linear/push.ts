import { isDeepStrictEqual } from 'node:util';
import type { ConnectorContext, LocalChange, PushOutcome } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import { linearQuery } from './graphql.ts';
import { descriptionVersion, issueJsonPath, issueMarkdownPath } from './issueItems.ts';
import { ISSUE_UPDATE_MUTATION, TEAM_STATES_QUERY, USER_BY_EMAIL_QUERY, type LinearIssue } from './queries.ts';

type UpdateChange = Extract<LocalChange, { kind: 'update' }>;
type WorkflowState = { id: string; name: string; type: string };

/** The issue fields a JSON node may change here; everything else is Linear's to change. */
const PUSHABLE = ['title', 'state', 'assignee'] as const;
const WHAT_GOES_BACK = 'Linear takes back the title, the state (by name), the assignee (by id or email) and the description (the .md node)';

/** Refused with a message the run shows next to the node. */
class Refusal extends Error {}

/**
 * Sends local edits back with `issueUpdate`, one change at a time (the outcomes are per change).
 * A change that touches a field Linear does not take from here is refused whole, so the node
 * never holds a half-applied edit.
 */
export async function pushLinear(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]> {
  const states = new Map<string, Promise<WorkflowState[]>>();
  const outcomes: PushOutcome[] = [];
  for (const change of changes) {
    try {
      outcomes.push(await pushOne(ctx, change, states));
    } catch (err) {
      // The provider refusing one change fails that change; anything else (needs_reauth, abort) stops the push.
      if (err instanceof Refusal || err instanceof ProviderError) outcomes.push({ ok: false, message: err.message });
      else throw err;
    }
  }
  return outcomes;
}

async function pushOne(ctx: ConnectorContext, change: LocalChange, states: Map<string, Promise<WorkflowState[]>>): Promise<PushOutcome> {
  if (change.kind === 'create') throw new Refusal(`Linear issues are not created from here (${change.path}): create the issue in Linear; it arrives with the next run.`);
  if (change.kind === 'delete') throw new Refusal('Linear issues are not deleted from here: archive or delete the issue in Linear; it leaves the project with the next run.');
  if (change.sourceId.endsWith(':description')) return pushDescription(ctx, change);
  return pushFields(ctx, change, states);
}

async function pushDescription(ctx: ConnectorContext, change: UpdateChange): Promise<PushOutcome> {
  if (typeof change.content !== 'string') throw new Refusal('the description node must hold Markdown text');
  const issueId = change.sourceId.slice(0, -':description'.length);
  const issue = await updateIssue(ctx, issueId, { description: change.content });
  return { ok: true, sourceId: change.sourceId, sourceVersion: descriptionVersion(issue.description), path: issueMarkdownPath(issue.identifier) };
}

async function pushFields(ctx: ConnectorContext, change: UpdateChange, states: Map<string, Promise<WorkflowState[]>>): Promise<PushOutcome> {
  const next = asObject(change.content);
  if (!next) throw new Refusal('an issue node must hold a JSON object');
  const before = asObject(change.previous) ?? {};
  const changed = [...new Set([...Object.keys(next), ...Object.keys(before)])].filter((k) => !isDeepStrictEqual(next[k], before[k]));
  const refused = changed.filter((k) => !(PUSHABLE as readonly string[]).includes(k));
  if (refused.length > 0) throw new Refusal(`${WHAT_GOES_BACK}; not ${refused.join(', ')}. Undo those edits or make them in Linear.`);

  const input: Record<string, unknown> = {};
  if (changed.includes('title')) {
    if (typeof next.title !== 'string' || next.title.trim() === '') throw new Refusal('title must be a non-empty string');
    input.title = next.title;
  }
  if (changed.includes('state')) input.stateId = await stateIdFor(ctx, change, next, before, states);
  if (changed.includes('assignee')) input.assigneeId = await assigneeIdFor(ctx, next.assignee, before.assignee);
  if (Object.keys(input).length === 0) return { ok: true, sourceId: change.sourceId, sourceVersion: change.known.sourceVersion };

  const issue = await updateIssue(ctx, change.sourceId, input);
  return { ok: true, sourceId: change.sourceId, sourceVersion: issue.updatedAt, path: issueJsonPath(issue.identifier), meta: { teamId: issue.team?.id ?? null, identifier: issue.identifier } };
}

/** The workflow state named in `state.name` (case-insensitive) among the issue's team's states. */
async function stateIdFor(
  ctx: ConnectorContext,
  change: UpdateChange,
  next: Record<string, unknown>,
  before: Record<string, unknown>,
  states: Map<string, Promise<WorkflowState[]>>,
): Promise<string> {
  const name = asObject(next.state)?.name;
  if (typeof name !== 'string' || name.trim() === '') throw new Refusal('state must be {"name": "<workflow state name>"}');
  if (name === asObject(before.state)?.name) throw new Refusal('change state.name to move the issue; state.type follows the state');
  const team = asObject(next.team)?.id ?? change.known.meta.teamId;
  if (typeof team !== 'string') throw new Refusal('the issue\'s team is unknown: run the sync again before changing its state');
  if (!states.has(team)) {
    states.set(team, linearQuery<{ team: { states: { nodes: WorkflowState[] } } }>(ctx, TEAM_STATES_QUERY, { id: team }).then((d) => d.team.states.nodes));
  }
  const all = await states.get(team)!;
  const found = all.find((s) => s.name.toLowerCase() === name.trim().toLowerCase());
  if (!found) throw new Refusal(`the team has no workflow state "${name}" (it has: ${all.map((s) => s.name).join(', ')})`);
  return found.id;
}

/** `null` unassigns; a changed `assignee.id` is used as is; a changed `assignee.email` is looked up. */
async function assigneeIdFor(ctx: ConnectorContext, next: unknown, before: unknown): Promise<string | null> {
  if (next === null) return null;
  const a = asObject(next);
  if (!a) throw new Refusal('assignee must be null or {"id": …} or {"email": …}');
  const prev = asObject(before) ?? {};
  if (typeof a.id === 'string' && a.id !== '' && a.id !== prev.id) return a.id;
  if (typeof a.email === 'string' && a.email !== '' && a.email !== prev.email) {
    const found = await linearQuery<{ users: { nodes: { id: string }[] } }>(ctx, USER_BY_EMAIL_QUERY, { email: a.email });
    const user = found.users.nodes[0];
    if (!user) throw new Refusal(`no Linear user has the email ${a.email}`);
    return user.id;
  }
  throw new Refusal('to reassign the issue, change assignee.id or assignee.email (the name follows)');
}

async function updateIssue(ctx: ConnectorContext, id: string, input: Record<string, unknown>): Promise<LinearIssue> {
  const data = await linearQuery<{ issueUpdate: { success: boolean; issue: LinearIssue | null } }>(ctx, ISSUE_UPDATE_MUTATION, { id, input });
  if (!data.issueUpdate.success || !data.issueUpdate.issue) throw new Refusal('Linear did not apply the update');
  return data.issueUpdate.issue;
}

function asObject(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
