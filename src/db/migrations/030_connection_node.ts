import type { Migration } from '../migrate.ts';

/**
 * The folder a node-bound connection (MCP or sandbox endpoint) is bound to becomes a column of
 * its own: it was `config`'s `$.node_id`, which only a JSON function could find, and the metadata
 * store's queries are the same on SQLite and PostgreSQL (issue 30). `config` keeps its copy for
 * the endpoints' views.
 */
export const connectionNodeMigration: Migration = {
  version: 30,
  name: 'connection_node',
  sql: `
ALTER TABLE connections ADD COLUMN node_id TEXT;
UPDATE connections SET node_id = json_extract(config, '$.node_id')
  WHERE json_valid(config) AND json_type(config, '$.node_id') = 'text';
CREATE INDEX connections_node ON connections(kind, node_id) WHERE node_id IS NOT NULL;
`,
};
