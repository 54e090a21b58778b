import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Settings } from '../config/settings.ts';
import type { ContentStore } from '../content/contentStore.ts';
import type { ChangeBus } from '../events/changeBus.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import { SandboxEndpoints } from './endpoints/sandboxEndpoints.ts';
import { SandboxExecutor, type ExecutorDeps } from './executor.ts';
import { selectRuntime } from './runtime/selectRuntime.ts';
import { WorkspacePool } from './workspace/workspacePool.ts';

export interface SandboxService {
  /** The one runtime every surface runs commands through (endpoints, the shell tool, agents). */
  executor: SandboxExecutor;
  endpoints: SandboxEndpoints;
  /** The working folders of commands (in a mount namespace of their own when the service mounts). */
  pool: WorkspacePool;
  /** Chooses the runtime (probing bubblewrap); before it, no command runs. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Chooses the runtime (logged once: which one and why), and builds the workspace pool and the endpoints. */
export function createSandbox(d: {
  settings: Settings;
  logger: Logger;
  content: ContentStore;
  bus: Pick<ChangeBus, 'subscribe'>;
  connections: AccessConnectionStore;
  access: ContentAccess;
  authorizer: Authorizer;
  writeTimeGrants: ExecutorDeps['writeTimeGrants'];
  narrowAtWrite?: ExecutorDeps['narrowAtWrite'];
  /**
   * Several workers (issue 29): each has its pool in `<sandboxDir>/<worker>` (a start clears its
   * own leftovers, never another worker's live folders); the box's first also clears what other
   * pools left. Absent: the one process, in `sandboxDir`.
   */
  worker?: { alone: boolean; workerName: string; boxStart: boolean };
}): SandboxService {
  const several = d.worker !== undefined && !d.worker.alone;
  const root = several ? join(d.settings.sandboxDir, d.worker!.workerName) : d.settings.sandboxDir;
  const pool = new WorkspacePool({
    root,
    content: d.content,
    logger: d.logger,
    ...(several && d.worker!.boxStart && { clearPoolsUnder: d.settings.sandboxDir }),
  });
  const executor = new SandboxExecutor({
    content: d.content,
    bus: d.bus,
    access: d.access,
    writeTimeGrants: d.writeTimeGrants,
    narrowAtWrite: d.narrowAtWrite,
    selectRuntime: () => selectRuntime(d.settings.sandbox, d.logger, { probeDir: root }),
    pool,
    logger: d.logger,
    maxConcurrent: d.settings.sandboxMaxRuns,
    maxQueued: d.settings.sandboxMaxRuns * 4,
  });
  const endpoints = new SandboxEndpoints({ connections: d.connections, content: d.content, access: d.access, authorizer: d.authorizer, executor });
  return {
    executor,
    endpoints,
    pool,
    async start() {
      // The probe runs in the folder the workspaces live in: one the sandbox cannot reach is found now.
      await mkdir(root, { recursive: true });
      await executor.start();
    },
    close: () => executor.close(),
  };
}
