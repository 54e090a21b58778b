/**
 * The GraphQL documents the Linear connector sends. Page sizes keep each query well under
 * Linear's 10,000-point complexity cap (a connection multiplies its children by `first`).
 */

export const ISSUE_PAGE_SIZE = 100;
/** Labels per issue: more than this is rare, and each one costs complexity on every issue of a page. */
export const LABELS_PER_ISSUE = 25;
/** Id-only pages (the out-of-scope check) are cheap: one object and one property per issue. */
export const ID_PAGE_SIZE = 250;

const ISSUE_FIELDS = `
  id identifier title description priority estimate dueDate createdAt updatedAt archivedAt trashed url
  state { id name type }
  assignee { id name email }
  labels(first: ${LABELS_PER_ISSUE}) { nodes { id name } }
  project { id name }
  cycle { id number name }
  team { id key }
`;

export const ISSUES_QUERY = `query CnsIssues($filter: IssueFilter, $first: Int!, $after: String, $includeArchived: Boolean) {
  issues(filter: $filter, first: $first, after: $after, includeArchived: $includeArchived, orderBy: updatedAt) {
    nodes { ${ISSUE_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const ISSUE_IDS_QUERY = `query CnsIssueIds($filter: IssueFilter, $first: Int!, $after: String) {
  issues(filter: $filter, first: $first, after: $after, includeArchived: true) {
    nodes { id }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const ISSUE_UPDATE_MUTATION = `mutation CnsIssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) {
    success
    issue { ${ISSUE_FIELDS} }
  }
}`;

export const TEAM_STATES_QUERY = `query CnsTeamStates($id: String!) {
  team(id: $id) { id key states(first: 250) { nodes { id name type } } }
}`;

export const USER_BY_EMAIL_QUERY = `query CnsUserByEmail($email: String!) {
  users(filter: { email: { eq: $email } }, first: 1) { nodes { id name email } }
}`;

export interface LinearIssue {
  id: string;
  identifier: string;
  title: string;
  description: string | null;
  priority: number;
  estimate: number | null;
  dueDate: string | null;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
  trashed: boolean | null;
  url: string;
  state: { id: string; name: string; type: string } | null;
  assignee: { id: string; name: string; email: string | null } | null;
  labels: { nodes: { id: string; name: string }[] };
  project: { id: string; name: string } | null;
  cycle: { id: string; number: number; name: string | null } | null;
  team: { id: string; key: string } | null;
}

export interface Connection<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}
