import { ApiError } from '../client/errors.ts';
import type { CliOutput } from '../io.ts';
import { BaseStore } from './baseStore.ts';
import type { CycleReport } from './cycleReport.ts';
import type { FileState, FolderConfig, FolderStore, SyncState } from './folderState.ts';
import { IgnoreRules } from './ignoreRules.ts';
import { SyncApi } from './syncApi.ts';
import { SyncCycle } from './syncCycle.ts';

/** A push refused because the project moved on meanwhile is retried this many times (pull, merge, push). */
const MAX_ATTEMPTS = 4;

/** Runs sync cycles for one folder, one at a time, keeping the state in memory between them. */
export class SyncEngine {
  readonly api: SyncApi;
  readonly config: FolderConfig;
  private state: SyncState;
  private readonly bases: BaseStore;

  constructor(
    private readonly store: FolderStore,
    private readonly options: { progress: CliOutput | false },
  ) {
    this.config = store.readConfig();
    this.api = new SyncApi(this.config.server, store.readKey(), this.config.syncId);
    this.state = store.readState();
    this.bases = new BaseStore(store.baseDir);
  }

  get cursor(): number {
    return this.state.cursor;
  }

  /** The state of a tracked file (watch mode tells its own writes from the user's with it). */
  tracked(rel: string): FileState | undefined {
    return this.state.files[rel];
  }

  /**
   * One cycle; a 409 from a push (someone wrote first) starts the cycle over with a fresh pull.
   * `dirty` (watch mode) limits the local scan to the paths the watcher reported.
   */
  async cycle(dirty: Set<string> | null = null): Promise<CycleReport> {
    for (let attempt = 1; ; attempt++) {
      // .cnsignore may have been edited since the last cycle.
      const rules = new IgnoreRules(this.store.root);
      const cycle = new SyncCycle({
        root: this.store.root,
        scope: this.config.scopePath,
        store: this.store,
        state: this.state,
        api: this.api,
        rules,
        bases: this.bases,
        progress: this.options.progress,
        dirty,
      });
      try {
        return await cycle.run();
      } catch (err) {
        const retry = err instanceof ApiError && err.status === 409 && (err.details as { reason?: string } | null)?.reason !== 'paused';
        if (!retry || attempt >= MAX_ATTEMPTS) throw err;
        this.state = this.store.readState();
      }
    }
  }

  /** Drops merge bases no tracked file needs any more. */
  async prune(): Promise<void> {
    await this.bases.prune(new Set(Object.values(this.state.files).map((f) => f.localHash)));
  }
}
