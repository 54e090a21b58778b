import type { PlatformConnector } from './connector.ts';

type Pull = PlatformConnector['pull'];
type Push = NonNullable<PlatformConnector['push']>;

/*
 * A connector's pull and push, imported by their first run: a process that never syncs with a
 * provider never loads its client code (most of platform/connectors, with marked and papaparse).
 * Its spec, config check and auth headers stay static: listing and validating need them.
 */

export function lazyPull<M>(load: () => Promise<M>, pick: (m: M) => Pull): Pull {
  let loading: Promise<M> | undefined;
  return async function* (ctx, cursor) {
    yield* pick(await (loading ??= load()))(ctx, cursor);
  };
}

export function lazyPush<M>(load: () => Promise<M>, pick: (m: M) => Push): Push {
  let loading: Promise<M> | undefined;
  return async (ctx, changes) => pick(await (loading ??= load()))(ctx, changes);
}
