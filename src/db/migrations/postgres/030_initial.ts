import type { Migration } from '../../migrate.ts';

/**
 * The PostgreSQL schema (docs/design/postgres.md): the metadata tables of SQLite's migrations
 * 001-030 as they stand, in one migration numbered like the last of them, so both engines carry the
 * same schema version from here on (the content index stays in SQLite on both). From now on a
 * change to a metadata table is a migration of the same number on each engine. Types:
 * times stay ISO text, as on SQLite; 0/1 flags
 * stay integers; times in milliseconds are BIGINT (read as numbers: db/postgres/pool.ts);
 * AUTOINCREMENT keys are identities; emails compare without case through a unique index on lower(email).
 */
export const postgresInitialMigration: Migration = {
  version: 30,
  name: 'initial',
  sql: `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  display_name TEXT NOT NULL DEFAULT '',
  is_admin INTEGER NOT NULL DEFAULT 0,
  initialized_at TEXT,
  onboarding_completed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

CREATE TABLE refresh_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  family_id TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  rotated_at TEXT,
  revoked_at TEXT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  is_default INTEGER NOT NULL DEFAULT 0,
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX projects_org ON projects(org_id);

CREATE TABLE org_members (
  org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members(user_id);

CREATE TABLE invitations (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
  token_hash TEXT NOT NULL UNIQUE,
  invited_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  accepted_at TEXT,
  accepted_by TEXT REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX invitations_org ON invitations(org_id);

CREATE TABLE project_members (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('admin','editor','viewer')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members(user_id);

-- Access keys and every connection built on them (SQLite's migration 030 adds node_id there).
CREATE TABLE connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('api','agent','mcp','sandbox','sync')),
  name TEXT NOT NULL,
  scope_path TEXT NOT NULL DEFAULT '',
  mode TEXT NOT NULL CHECK (mode IN ('read','read_write')),
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','paused','revoked')),
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  node_id TEXT,
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE INDEX connections_project ON connections(project_id);
CREATE INDEX connections_node ON connections(kind, node_id) WHERE node_id IS NOT NULL;
CREATE UNIQUE INDEX connections_default_agent ON connections(project_id)
  WHERE kind = 'agent' AND (config::jsonb ->> 'is_default') = 'true';

-- Processes cache rows of these tables (db/metadata/metadataChanges.ts, CACHED_TABLES): every
-- statement that changes one tells the listeners at commit. A table of that list moving here
-- later gets its trigger with it.
CREATE FUNCTION cns_metadata_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('cns_metadata_changed', TG_TABLE_NAME);
  RETURN NULL;
END $$;
CREATE TRIGGER refresh_tokens_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refresh_tokens FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
CREATE TRIGGER users_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
CREATE TRIGGER organizations_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organizations FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
CREATE TRIGGER projects_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
CREATE TRIGGER org_members_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON org_members FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
CREATE TRIGGER project_members_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON project_members FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
-- A key's use stamps last_used_at (auth/authenticator.ts): not a change any cache must see.
CREATE TRIGGER connections_changed AFTER INSERT OR DELETE OR TRUNCATE ON connections FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();
CREATE TRIGGER connections_updated AFTER UPDATE OF id, project_id, kind, name, scope_path, mode, status, key_hash, key_prefix, config, node_id, created_by, created_at, updated_at
  ON connections FOR EACH STATEMENT EXECUTE FUNCTION cns_metadata_changed();

CREATE TABLE mcp_proxy_servers (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  headers_encrypted TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX mcp_proxy_servers_name ON mcp_proxy_servers(project_id, name);

CREATE TABLE access_counts (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  minute INTEGER NOT NULL,
  publish_id TEXT NOT NULL DEFAULT '',
  connection_id TEXT NOT NULL DEFAULT '',
  node_id TEXT NOT NULL DEFAULT '',
  views INTEGER NOT NULL DEFAULT 0,
  api_calls INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, minute, publish_id, connection_id, node_id)
);

CREATE TABLE access_visitors (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  minute INTEGER NOT NULL,
  publish_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  visitor TEXT NOT NULL,
  PRIMARY KEY (project_id, minute, publish_id, node_id, visitor)
);

CREATE TABLE analytics_salts (
  day TEXT PRIMARY KEY,
  salt TEXT NOT NULL
);

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  path_prefix TEXT NOT NULL DEFAULT '',
  active INTEGER NOT NULL DEFAULT 1,
  secret_sealed TEXT NOT NULL,
  creator_kind TEXT NOT NULL CHECK (creator_kind IN ('user', 'key')),
  creator_id TEXT NOT NULL,
  cursor BIGINT NOT NULL,
  failing_since BIGINT,
  disabled_at TEXT,
  disabled_reason TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhooks_project ON webhooks(project_id);

CREATE TABLE webhook_deliveries (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  hook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  project_version BIGINT,
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  first_attempt_at BIGINT,
  last_attempt_at BIGINT,
  response_status INTEGER,
  response_body TEXT,
  duration_ms INTEGER,
  error TEXT,
  redelivery_of TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries(hook_id, status, seq);

CREATE TABLE publishes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL,
  publish_key TEXT NOT NULL UNIQUE,
  slug TEXT UNIQUE,
  version BIGINT,
  enabled INTEGER NOT NULL DEFAULT 1,
  expires_at TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX publishes_project ON publishes(project_id, created_at);

CREATE TABLE oauth_connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('oauth', 'token')),
  account TEXT,
  scopes TEXT NOT NULL DEFAULT '[]',
  tokens_sealed TEXT NOT NULL,
  expires_at TEXT,
  needs_reauth INTEGER NOT NULL DEFAULT 0,
  connected_by TEXT,
  connected_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX oauth_connections_project_provider ON oauth_connections(project_id, provider);

CREATE TABLE oauth_states (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  verifier_sealed TEXT,
  redirect_after TEXT,
  expires_at BIGINT NOT NULL
);
CREATE INDEX oauth_states_expiry ON oauth_states(expires_at);

CREATE TABLE db_connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  engine TEXT NOT NULL CHECK (engine IN ('postgres', 'mysql', 'sqlite')),
  host TEXT,
  port INTEGER,
  database TEXT,
  "user" TEXT,
  password_encrypted TEXT,
  ssl TEXT NOT NULL DEFAULT 'disable',
  file TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX db_connections_name ON db_connections(project_id, name);

CREATE TABLE tools (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX tools_project ON tools(project_id, created_at);
CREATE INDEX tools_node ON tools(node_id);

-- Agents (src/agents/). An agent is a row of connections; its records go with it.
CREATE TABLE agent_accesses (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  node_id TEXT,
  mode TEXT NOT NULL CHECK (mode IN ('read', 'read_write')),
  tools TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX agent_accesses_node ON agent_accesses(agent_id, coalesce(node_id, ''));

CREATE TABLE agent_bash_tools (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  node_id TEXT,
  name TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('read', 'read_write')),
  limits TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (agent_id, name)
);

CREATE TABLE chat_sessions (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title TEXT NOT NULL DEFAULT '',
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX chat_sessions_agent ON chat_sessions(agent_id, updated_at);
CREATE INDEX chat_sessions_project ON chat_sessions(project_id, updated_at);

CREATE TABLE agent_executions (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  session_id TEXT REFERENCES chat_sessions(id) ON DELETE SET NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  tool_calls TEXT NOT NULL DEFAULT '[]',
  versions_written TEXT NOT NULL DEFAULT '[]',
  error TEXT
);
CREATE INDEX agent_executions_agent ON agent_executions(agent_id, started_at, seq);
CREATE INDEX agent_executions_session ON agent_executions(session_id);
CREATE INDEX agent_executions_running ON agent_executions(status) WHERE status = 'running';

CREATE TABLE chat_messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool_call', 'tool_result')),
  content TEXT NOT NULL,
  execution_id TEXT REFERENCES agent_executions(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  UNIQUE (session_id, seq)
);
CREATE INDEX chat_messages_execution ON chat_messages(execution_id);

CREATE TABLE agent_workspaces (
  agent_id TEXT PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  base_version BIGINT NOT NULL,
  roots TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE agent_workspace_files (
  agent_id TEXT NOT NULL REFERENCES agent_workspaces(agent_id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('written', 'deleted')),
  type TEXT NOT NULL CHECK (type IN ('markdown', 'json', 'file', 'folder')),
  content BYTEA,
  base_version BIGINT,
  base_node_id TEXT,
  base_project_version BIGINT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, path)
);

CREATE TABLE agent_tool_bindings (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  tool_id TEXT NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  name TEXT,
  description TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (agent_id, tool_id)
);
CREATE UNIQUE INDEX agent_tool_bindings_name ON agent_tool_bindings(agent_id, name) WHERE name IS NOT NULL;
CREATE INDEX agent_tool_bindings_tool ON agent_tool_bindings(tool_id);

CREATE TABLE agent_tool_calls (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  tool_name TEXT NOT NULL,
  ok INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  surface TEXT NOT NULL CHECK (surface IN ('mcp', 'chat')),
  at TEXT NOT NULL
);
CREATE INDEX agent_tool_calls_agent ON agent_tool_calls(agent_id, at);
CREATE INDEX agent_tool_calls_at ON agent_tool_calls(at);

-- Syncs, with SQLite's migration 028 (seq, pending_page). sync_states.sync_id is the id of the
-- sync's connection, and goes with it.
CREATE TABLE sync_states (
  sync_id TEXT PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  trigger_mode TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active','paused')),
  acked_cursor BIGINT NOT NULL DEFAULT 0,
  last_run_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  interval_s INTEGER,
  next_run_at TEXT,
  source_cursor TEXT,
  local_cursor BIGINT,
  pause_reason TEXT,
  webhook_secret TEXT,
  pending_page TEXT
);
CREATE INDEX sync_states_project ON sync_states(project_id);
CREATE INDEX sync_states_due ON sync_states(next_run_at) WHERE next_run_at IS NOT NULL;

CREATE TABLE sync_runs (
  id TEXT PRIMARY KEY,
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','interrupted')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  cursor_from BIGINT,
  cursor_to BIGINT,
  files_up INTEGER NOT NULL DEFAULT 0,
  files_down INTEGER NOT NULL DEFAULT 0,
  conflicts TEXT NOT NULL DEFAULT '[]',
  errors TEXT NOT NULL DEFAULT '[]',
  pulled_created INTEGER NOT NULL DEFAULT 0,
  pulled_updated INTEGER NOT NULL DEFAULT 0,
  pulled_deleted INTEGER NOT NULL DEFAULT 0,
  cursor_before TEXT,
  cursor_after TEXT,
  http_calls INTEGER NOT NULL DEFAULT 0,
  rate_limited_ms BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sync_runs_sync ON sync_runs(sync_id, started_at);
CREATE INDEX sync_runs_active ON sync_runs(status) WHERE status IN ('queued','running');

CREATE TABLE sync_items (
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  source_id TEXT NOT NULL,
  node_id TEXT,
  node_path TEXT NOT NULL,
  path TEXT NOT NULL,
  source_version TEXT NOT NULL,
  content_hash TEXT,
  meta TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (sync_id, source_id)
);
CREATE INDEX sync_items_node ON sync_items(sync_id, node_id);

CREATE TABLE sync_webhook_deliveries (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  delivery_id TEXT,
  digest TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  run_id TEXT
);
CREATE UNIQUE INDEX sync_webhook_deliveries_id ON sync_webhook_deliveries(sync_id, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE UNIQUE INDEX sync_webhook_deliveries_digest ON sync_webhook_deliveries(sync_id, digest);
CREATE INDEX sync_webhook_deliveries_age ON sync_webhook_deliveries(sync_id, received_at);

CREATE TABLE ingest_tasks (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  source TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('file','url','platform')),
  status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','cancelled')),
  target_path TEXT NOT NULL,
  mode TEXT,
  keep_original INTEGER NOT NULL DEFAULT 0,
  rule_id TEXT,
  input TEXT NOT NULL,
  progress TEXT,
  result TEXT,
  error TEXT,
  created_by TEXT NOT NULL,
  actor TEXT NOT NULL,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT
);
CREATE INDEX ingest_tasks_status ON ingest_tasks(status, project_id, seq);
CREATE INDEX ingest_tasks_project ON ingest_tasks(project_id, seq);

CREATE TABLE ingest_rules (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  match TEXT NOT NULL DEFAULT '{}',
  target TEXT NOT NULL CHECK (target IN ('markdown','json')),
  json_schema TEXT,
  instructions TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX ingest_rules_project ON ingest_rules(project_id, created_at, seq);

CREATE TABLE json_tables (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  json_schema TEXT,
  path TEXT NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX json_tables_project ON json_tables(project_id, created_at);

CREATE TABLE node_uploads (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  parent_id TEXT,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  base_version BIGINT NOT NULL,
  size BIGINT NOT NULL,
  mime_type TEXT,
  principal_kind TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  claimed_at TEXT
);
CREATE INDEX node_uploads_expiry ON node_uploads(expires_at);
`,
};
