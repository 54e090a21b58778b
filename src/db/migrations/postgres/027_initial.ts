import type { Migration } from '../../migrate.ts';

/**
 * The PostgreSQL schema (docs/design/postgres.md): the SQLite schema of migrations 001-026 as it
 * stands, table by table, for the stores already on the metadata store and the tables their rows
 * refer to. It grows with step 2 until PostgreSQL is offered (CNS_DATABASE_URL, step 4); from then
 * on both engines continue with the same numbers. Times stay ISO text, as on SQLite; 0/1 flags
 * stay integers; times in milliseconds are BIGINT (read as numbers: db/postgres/pool.ts);
 * AUTOINCREMENT keys are identities; emails compare without case through a unique index on lower(email).
 */
export const postgresInitialMigration: Migration = {
  version: 27,
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
