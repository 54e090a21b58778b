import type { Migration } from '../migrate.ts';

/**
 * The author a pushed git commit names, beside the actor who pushed it (issue 28): `author`
 * stays the actor's identity, `commit_author` holds the commit's claimed author when it differs
 * (NULL otherwise, and for every version written before this column existed).
 */
export const commitAuthorsMigration: Migration = {
  version: 23,
  name: 'commit_authors',
  sql: `
ALTER TABLE node_versions ADD COLUMN commit_author TEXT;
ALTER TABLE project_commits ADD COLUMN commit_author TEXT;
ALTER TABLE content_audit_log ADD COLUMN commit_author TEXT;
`,
};
