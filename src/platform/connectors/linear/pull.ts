import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { linearQuery } from './graphql.ts';
import { issueChanges, issueDeletes } from './issueItems.ts';
import { ID_PAGE_SIZE, ISSUE_IDS_QUERY, ISSUE_PAGE_SIZE, ISSUES_QUERY, type Connection, type LinearIssue } from './queries.ts';
import { linearScope, outOfScopeFilter, scopeFilter } from './scope.ts';

type IssuesPage<T> = { issues: Connection<T> };

/** The cursor of a sync whose first pull found no issue: the next run asks for everything after it. */
const EPOCH = '1970-01-01T00:00:00.000Z';

/**
 * The issues in scope, page by page. The cursor is the newest `updatedAt` seen; an incremental
 * run asks only for issues updated after it (archived and trashed ones included, so they leave
 * the project). Pages are ordered by `updatedAt`, but the cursor only moves once the whole
 * listing is done, so a run cut short starts the listing again rather than skipping issues.
 */
export async function* pullLinear(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const scope = linearScope(ctx.config);
  const since = validSince(cursor);
  const filter = since ? { ...scopeFilter(scope), updatedAt: { gt: since } } : scopeFilter(scope);
  let newest = since;
  const seen = new Set<string>();
  let after: string | null = null;
  for (;;) {
    const { issues }: IssuesPage<LinearIssue> = await linearQuery<IssuesPage<LinearIssue>>(ctx, ISSUES_QUERY, {
      filter,
      first: ISSUE_PAGE_SIZE,
      after,
      includeArchived: since !== null,
    });
    const changes: SourceChange[] = [];
    for (const issue of issues.nodes) {
      seen.add(issue.id);
      changes.push(...issueChanges(issue));
      if (newest === null || Date.parse(issue.updatedAt) > Date.parse(newest)) newest = issue.updatedAt;
    }
    const next: string | null = issues.pageInfo.hasNextPage ? issues.pageInfo.endCursor : null;
    if (next) {
      yield { changes, cursor: since };
      after = next;
      continue;
    }
    const gone = since === null ? missingFromFullListing(ctx, seen) : await movedOutOfScope(ctx, scope, since, seen);
    yield { changes: [...changes, ...gone], cursor: newest ?? EPOCH };
    return;
  }
}

function validSince(cursor: string | null): string | null {
  return cursor !== null && !Number.isNaN(Date.parse(cursor)) ? cursor : null;
}

/** A full listing is the truth: every item held here whose issue it did not list has gone. */
function missingFromFullListing(ctx: ConnectorContext, seen: Set<string>): SourceChange[] {
  const gone: SourceChange[] = [];
  for (const k of ctx.known.all()) {
    if (!seen.has(issueIdOf(k.sourceId))) gone.push({ kind: 'delete', sourceId: k.sourceId });
  }
  return gone;
}

/**
 * Issues held here that were updated since the cursor but now belong to another team or
 * project. Only ids are asked for (cheap pages), and only when the sync holds something.
 */
async function movedOutOfScope(ctx: ConnectorContext, scope: ReturnType<typeof linearScope>, since: string, seen: Set<string>): Promise<SourceChange[]> {
  if (ctx.known.size === 0) return [];
  const filter = { ...outOfScopeFilter(scope), updatedAt: { gt: since } };
  const gone: SourceChange[] = [];
  let after: string | null = null;
  do {
    const { issues }: IssuesPage<{ id: string }> = await linearQuery<IssuesPage<{ id: string }>>(ctx, ISSUE_IDS_QUERY, { filter, first: ID_PAGE_SIZE, after });
    for (const { id } of issues.nodes) if (!seen.has(id) && ctx.known.get(id)) gone.push(...issueDeletes(id));
    after = issues.pageInfo.hasNextPage ? issues.pageInfo.endCursor : null;
  } while (after);
  return gone;
}

function issueIdOf(sourceId: string): string {
  return sourceId.endsWith(':description') ? sourceId.slice(0, -':description'.length) : sourceId;
}
