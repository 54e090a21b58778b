import type { ContentStore } from '../../src/content/contentStore.ts';

/** Waits (each turn of the event loop) until `done`, or fails after a deadline. */
export async function until(what: string, done: () => boolean, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

export interface WriterHold {
  /** Plain commits (`ContentStore.commit`) queued since the hold began. */
  readonly commits: number;
  /** Planned commits (`commitPlanned`) queued since the hold began. */
  readonly planned: number;
  /** The tip each planned commit's plan was run against, in order: one entry per plan run (a retry would add one). */
  readonly planTips: (string | null)[];
  /** Lets the queued writes run, in the order they were queued; resolves once the hold is gone. */
  release(): Promise<void>;
}

/**
 * Holds a project's serialized writer (a planned commit that waits) and counts the writes queued
 * behind it: a test queues writes in a known order, then lets them all run. The store's methods
 * are wrapped on the instance and restored by `release`.
 */
export async function holdWriter(content: ContentStore, projectId: string): Promise<WriterHold> {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let holding = false;
  const held = content.commitPlanned(projectId, { type: 'user', id: 'test', author: 'test@example.com' }, async () => {
    holding = true;
    await gate;
    return null;
  });
  await until('the writer to be held', () => holding);
  const state = { commits: 0, planned: 0, planTips: [] as (string | null)[] };
  const commit = content.commit.bind(content);
  const commitPlanned = content.commitPlanned.bind(content);
  content.commit = (...args) => {
    state.commits++;
    return commit(...args);
  };
  content.commitPlanned = (projectId, actor, plan) => {
    state.planned++;
    return commitPlanned(projectId, actor, (tip) => {
      state.planTips.push(tip);
      return plan(tip);
    });
  };
  return {
    get commits() {
      return state.commits;
    },
    get planned() {
      return state.planned;
    },
    planTips: state.planTips,
    async release() {
      open();
      await held;
      delete (content as { commit?: unknown }).commit;
      delete (content as { commitPlanned?: unknown }).commitPlanned;
    },
  };
}
