import { redactUrl, redactUrlsIn } from '../../logging/redact.ts';

/**
 * The connector specs `GET /sync/connectors` lists. Platform connectors (notes workspaces,
 * drives, trackers…) come later and must fit this same record.
 */
export interface ConnectorField {
  name: string;
  type: 'string' | 'url' | 'path' | 'integer' | 'boolean' | 'string_list';
  required: boolean;
  description: string;
}

export interface ConnectorSpec {
  provider: string;
  display_name: string;
  description: string;
  /** How the connector reaches its source: none (the client pushes), public (plain fetch), oauth, api_key… */
  auth: { type: 'none' | 'public' | 'oauth' | 'api_key'; description: string; scopes?: string[]; personal_token?: boolean };
  /** What a run can do: pull from the source, and which local changes it can push back. */
  capabilities?: { pull: boolean; push: { create: boolean; update: boolean; delete: boolean }; incremental: boolean; webhooks: boolean };
  /** Trigger modes a sync of this provider may be set to with PATCH …/trigger. */
  sync_modes: string[];
  default_sync_mode: string;
  /** `pull`: source → project; `push`: project → source. */
  directions: ('pull' | 'push')[];
  config_fields: ConnectorField[];
}

export const connectors: readonly ConnectorSpec[] = [
  {
    provider: 'folder',
    display_name: 'Local folder',
    description: 'Two-way sync of a folder on your machine with `cns sync DIR` (push-file, pull-files, ack-pull).',
    auth: { type: 'none', description: 'The command line holds the sync connection\'s own access key, kept in DIR/.cns/.' },
    sync_modes: ['manual', 'watch'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: false, description: 'Subtree of the project the folder mirrors (the whole project when empty).' },
      { name: 'folder', type: 'string', required: false, description: 'Where the folder lives on the client machine (informative).' },
      { name: 'host', type: 'string', required: false, description: 'Name of the client machine (informative).' },
    ],
  },
  {
    provider: 'url',
    display_name: 'Web address',
    description: 'Fetches one public URL into a node of the project on each refresh.',
    auth: { type: 'public', description: 'Plain HTTP(S) GET without credentials.' },
    sync_modes: ['manual'],
    default_sync_mode: 'manual',
    directions: ['pull'],
    config_fields: [
      { name: 'url', type: 'url', required: true, description: 'http or https address to fetch.' },
      { name: 'path', type: 'path', required: true, description: 'Project path the fetched content is written to; its extension gives the node type.' },
    ],
  },
];

export function connectorFor(provider: string): ConnectorSpec | undefined {
  return connectors.find((c) => c.provider === provider);
}

/**
 * A connection's config as it may be shown: every `url` field without userinfo or query string
 * (where tokens travel). The full address stays stored for fetching, and is never shown again.
 */
export function redactedConfig(config: Record<string, unknown>): Record<string, unknown> {
  const spec = typeof config.provider === 'string' ? connectorFor(config.provider) : undefined;
  const urlFields = new Set(spec?.config_fields.filter((f) => f.type === 'url').map((f) => f.name) ?? []);
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, typeof v !== 'string' ? v : urlFields.has(k) ? redactUrl(v) : redactUrlsIn(v)]),
  );
}
