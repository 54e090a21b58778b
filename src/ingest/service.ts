import type { ChatProviders } from '../llm/providers.ts';
import type { Settings } from '../config/settings.ts';
import type { ContentStore } from '../content/contentStore.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import type { WriteTimeGrants } from '../policies/writeTimeGrant.ts';
import { Ingest } from './ingest.ts';
import { IngestQueue } from './queue/ingestQueue.ts';
import { SourceConverter } from './queue/sourceConverter.ts';
import { TaskRunner } from './queue/taskRunner.ts';
import { TaskStore } from './queue/taskStore.ts';
import type { SyncConnectorLookup } from './sources.ts';
import { IngestTemp } from './queue/tempFiles.ts';
import { IngestRules } from './rules/rules.ts';
import { RuleStore } from './rules/ruleStore.ts';
import { ConversionPool } from './worker/conversionPool.ts';
import type { ConvertInput, ConvertOutput } from './converters/converter.ts';

/** What ingestion asks of the process's ownership of projects (src/cluster/ownership.ts). */
export interface IngestOwnership {
  alone: boolean;
  workerName: string;
  boxStart: boolean;
  adopt(projectId: string): boolean;
  onAcquired(listener: (projectId: string) => void): () => void;
}

/** How often a worker among several looks for tasks queued by another (a submit is served anywhere). */
const QUEUED_ELSEWHERE_POLL_MS = 1000;

export interface IngestService {
  ingest: Ingest;
  rules: IngestRules;
  queue: IngestQueue;
  /**
   * Converts a file in the conversion processes (off the event loop), for other surfaces that
   * convert documents (a Drive sync with `convert`).
   */
  convert(input: ConvertInput, signal?: AbortSignal): Promise<ConvertOutput>;
  /** Stops the queue (running tasks are queued again for the next start), then the conversion processes. */
  close(): Promise<void>;
}

/**
 * Builds ingestion: the task queue on the metadata store, its conversion processes, the rules, and starts
 * working (tasks a stop interrupted are queued again first).
 */
export function createIngest(d: {
  settings: Settings;
  logger: Logger;
  metadata: MetadataStore;
  content: ContentStore;
  access: ContentAccess;
  /** Each task's write asks the policy again, with the submitter as it stands then. */
  writeTimeGrants: Pick<WriteTimeGrants, 'require'>;
  providers: ChatProviders;
  /** A source type that names a sync connector (folder, url), to say so when it is submitted. */
  syncConnector: SyncConnectorLookup;
  /** Several workers (issue 29): which projects' tasks run here, and whether start-up recovers. Absent: the one process. */
  ownership?: IngestOwnership;
  /**
   * The cluster node this process is (issue 31): recorded on the tasks it claims, and start-up
   * recovers only those left running (and tasks from before the cluster). Null: a single box,
   * whose start-up recovers every running task.
   */
  nodeId: string | null;
}): IngestService {
  const s = d.settings;
  const o = d.ownership;
  const store = new TaskStore(d.metadata, d.nodeId);
  const temp = new IngestTemp(s.dataDir, o && !o.alone ? o.workerName : '');
  const pool = new ConversionPool({ size: s.ingest.workers, timeoutMs: s.ingest.conversionTimeoutMs });
  const guards = { maxDecompressedBytes: s.ingest.maxDecompressedBytes, maxPdfPages: s.ingest.maxPdfPages };
  const rules = new IngestRules({ store: new RuleStore(d.metadata), access: d.access, providers: d.providers, model: s.llm.defaultModel });
  const converter = new SourceConverter({
    pool,
    rules,
    providers: d.providers,
    model: s.llm.defaultModel,
    limits: { ...guards, maxNodeBytes: s.maxContentBytes },
  });
  const runner = new TaskRunner({
    content: d.content,
    status: async (id) => (await store.find(id))?.status ?? null,
    grants: d.writeTimeGrants,
    converter,
    temp,
    url: { maxBytes: s.ingest.maxFileBytes, timeoutMs: s.ingest.urlTimeoutMs, allowPrivate: s.urlFetchAllowPrivate },
  });
  const several = o !== undefined && !o.alone;
  const queue = new IngestQueue({
    store,
    temp,
    workers: s.ingest.workers,
    execute: (task, run) => runner.execute(task, run),
    committed: (task) => runner.committed(task),
    logger: d.logger,
    ...(several && { adopt: (projectId: string) => o.adopt(projectId), recover: o.boxStart, pollMs: QUEUED_ELSEWHERE_POLL_MS }),
  });
  // A project taken over (its owner stopped) runs the tasks queued for it at once.
  const stopHearing = several ? o.onAcquired(() => queue.pump()) : () => {};
  const ingest = new Ingest({ store, queue, rules, access: d.access, syncConnector: d.syncConnector, content: d.content, temp, pool, maxPages: s.ingest.maxPages, allowPrivate: () => s.urlFetchAllowPrivate });
  // Recovery is awaited by submissions (queue.ready) and by close; a failure is logged, and the queue works on.
  queue.start().catch((err: unknown) => d.logger.error({ err }, 'ingestion could not recover the tasks a stop left'));
  return {
    ingest,
    rules,
    queue,
    // Other surfaces' conversions keep their node size, within this installation's bomb guards.
    convert: (input, signal) =>
      pool.run(
        {
          ...input,
          limits: {
            ...input.limits,
            maxDecompressedBytes: Math.min(input.limits.maxDecompressedBytes, guards.maxDecompressedBytes),
            maxPdfPages: Math.min(input.limits.maxPdfPages, guards.maxPdfPages),
          },
        },
        { signal },
      ),
    async close() {
      stopHearing();
      await queue.close();
      await pool.close();
    },
  };
}
