import { SecretBox } from '../../auth/secretBox.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';
import { DbConnectionStore } from './dbConnectionStore.ts';
import { DbConnectors } from './connectors.ts';
import type { ConnectorSettings } from './engines.ts';

/**
 * The database connectors (spec 4.10) as the app wires them: records on the metadata store with passwords
 * sealed under a key derived from the service's signing secret (purpose `db-connector-passwords`,
 * the same pattern as the MCP proxy's header values).
 */
export function createDbConnectors(d: {
  metadata: MetadataStore;
  signingSecret: Uint8Array;
  access: ContentAccess;
  content: ContentStore;
  settings: () => ConnectorSettings;
}): DbConnectors {
  const store = new DbConnectionStore(d.metadata, new SecretBox(d.signingSecret, 'db-connector-passwords'));
  return new DbConnectors({ store, access: d.access, content: d.content, settings: d.settings });
}
