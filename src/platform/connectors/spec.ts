import { redactUrl, redactUrlsIn } from '../../logging/redact.ts';
import type { ConnectorSpec } from '../../sync/connectorSpec.ts';
import { folderConnector } from '../../sync/folderSync.ts';
import { urlConnector } from '../url/urlSync.ts';

/**
 * The connectors every server has, before the platform connectors the runtime registers: the
 * folder sync of the command line and the url sync. `GET /sync/connectors` lists them first.
 */
export const connectors: readonly ConnectorSpec[] = [folderConnector, urlConnector];

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
