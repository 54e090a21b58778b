import { invalidField } from '../errors/domainError.ts';

/**
 * What a sync provider declares, as `GET /sync/connectors` lists it: the folder sync of the
 * command line (here), the url sync and the platform connectors (src/platform/) alike.
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

/** The config of a sync whose fields are all strings (folder, url): required ones present, each a string. */
export function checkStringFields(spec: ConnectorSpec, config: Record<string, unknown>): void {
  for (const f of spec.config_fields) {
    const v = config[f.name];
    if (f.required && (v === undefined || v === '')) throw invalidField(`config.${f.name}`, 'is required');
    if (v !== undefined && typeof v !== 'string') throw invalidField(`config.${f.name}`, 'must be a string');
  }
}
