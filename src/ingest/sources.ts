import { invalidField } from '../errors/domainError.ts';

/** The sync connector a source type names, if any (the composition root passes the sync registry's lookup). */
export type SyncConnectorLookup = (type: string) => { display_name: string; description: string } | undefined;

/** The `source.type`s a saas submission accepts. */
export const SUPPORTED_SOURCES = ['url'] as const;

/**
 * Why a platform source cannot be ingested, as a 422 naming the supported types. The sync
 * connector registry holds `folder` (driven by `cns sync` on the client's machine: nothing for
 * the server to fetch) and `url` (ingested here directly, with conversion and crawling); a
 * platform connector that pulls on the server (a notes workspace, a drive) is dispatched here
 * once the registry has one.
 */
export function platformSourceError(type: string, syncConnector: SyncConnectorLookup) {
  const supported = `supported source types: ${SUPPORTED_SOURCES.join(', ')}`;
  const connector = syncConnector(type);
  const message = connector
    ? `source type ${type} is a sync connector the client drives (${connector.display_name}: ${connector.description}); create a sync for it instead (POST /sync/bootstrap). ${supported}`
    : `unknown source type ${type}; ${supported}`;
  return invalidField('source.type', message);
}
