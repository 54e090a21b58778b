import type { Settings } from '../config/settings.ts';
import type { ContentStore } from '../content/contentStore.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import type { SandboxExecutor } from '../sandbox/executor.ts';
import type { ChangeBus } from '../events/changeBus.ts';
import type { Changelog } from '../events/changelog.ts';
import { EmbeddingsClient } from '../search/embeddings.ts';
import { SearchIndexer, type IndexerOptions } from '../search/indexer.ts';
import { ToolStore } from './toolStore.ts';
import { Tools } from './tools.ts';

export interface ToolsService {
  tools: Tools;
  indexer: SearchIndexer;
  close(): Promise<void>;
}

/**
 * Builds the tools library and its search indexer, subscribed to the change bus; projects that have a search tool catch up right away (after a restart too).
 */
export function createTools(d: {
  settings: Settings;
  logger: Logger;
  metadata: MetadataStore;
  content: ContentStore;
  bus: Pick<ChangeBus, 'subscribe'>;
  changelog: Changelog;
  access: ContentAccess;
  authorizer: Authorizer;
  sandbox: SandboxExecutor;
  indexer?: Partial<IndexerOptions>;
  /**
   * Several workers (issue 29): the search indexer runs on a project's owner only, started for
   * the projects held at start and for each one taken over later. Absent: every project's.
   */
  ownership?: { holds(projectId: string): boolean; onAcquired(listener: (projectId: string) => void): () => void };
}): ToolsService {
  const embeddings = d.settings.embeddings ? new EmbeddingsClient(d.settings.embeddings, { logger: d.logger }) : null;
  const store = new ToolStore(d.metadata);
  const indexer: SearchIndexer = new SearchIndexer({
    content: d.content,
    changelog: d.changelog,
    dataDir: d.settings.dataDir,
    embeddings,
    logger: d.logger,
    queryThreads: d.settings.searchThreads,
    // A deleted project takes its tools with it (foreign key): its index goes too.
    isWanted: async (projectId) => (await store.searchToolCount(projectId)) > 0,
    onUnwanted: (projectId) => void indexer.disable(projectId),
    ...d.indexer,
  });
  const unsubscribe = d.bus.subscribe('search-indexer', (e) => indexer.notify(e.project), { local: true });
  const tools = new Tools({ store, authorizer: d.authorizer, content: d.content, access: d.access, indexer, sandbox: d.sandbox });
  const o = d.ownership;
  const failed = (what: string, projectId?: string) => (err: unknown) => d.logger.error({ err, projectId }, what);
  void tools.start(o ? (projectId) => o.holds(projectId) : undefined).catch(failed('search indexes could not be started'));
  const stopHearing = o ? o.onAcquired((projectId) => void tools.adopted(projectId).catch(failed('search index of an adopted project could not be started', projectId))) : () => {};
  return {
    tools,
    indexer,
    async close() {
      stopHearing();
      unsubscribe();
      await indexer.close();
    },
  };
}
