import type { Logger } from '../../logging/logger.ts';

/** Told about a project's provider connection: (projectId, provider). */
export type ConnectionListener = (projectId: string, provider: string) => void | Promise<void>;

/**
 * What others learn about connections: one was disconnected, or lost its authorization
 * (needs_reauth). The sync runtime listens to pause the syncs that used it. A listener that fails
 * is logged and does not stop the others nor the request that caused the event.
 */
export class ConnectionEvents {
  private readonly listeners = { disconnected: new Set<ConnectionListener>(), needsReauth: new Set<ConnectionListener>() };

  constructor(private readonly logger: Logger) {}

  /** Adds a listener; returns its removal. */
  on(event: 'disconnected' | 'needsReauth', fn: ConnectionListener): () => void {
    this.listeners[event].add(fn);
    return () => this.listeners[event].delete(fn);
  }

  async emit(event: 'disconnected' | 'needsReauth', projectId: string, provider: string): Promise<void> {
    const results = await Promise.allSettled([...this.listeners[event]].map(async (fn) => fn(projectId, provider)));
    for (const r of results) {
      if (r.status === 'rejected') this.logger.warn({ project_id: projectId, provider, event, err: (r.reason as Error)?.message }, 'oauth connection listener failed');
    }
  }
}
