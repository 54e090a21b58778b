import { AsyncLocalStorage } from 'node:async_hooks';
import type { Middleware } from 'koa';

/**
 * PuppyOne's clients read some answers under names of their own that repeat ours (`items` beside
 * `nodes`, a flat `entries` beside a tree, `preview_md` beside `content`): serialized twice, a
 * list answer is about twice the bytes and half again the time (docs/benchmarks.md, issue 32).
 * Only a service that serves those clients pays that: with CNS_PUPPYONE_COMPAT the requests run
 * with this flag on, and the presenters add the duplicates; without it the middleware is not
 * even installed. Names PuppyOne uses that cost nothing (`user_email`, `exists`, `new_version`, …)
 * are always there.
 */
const shapes = new AsyncLocalStorage<true>();

export function puppyOneShapes(): boolean {
  return shapes.getStore() === true;
}

/** The middleware that turns the duplicates on for every request (installed only when the setting is). */
export function puppyOneCompat(): Middleware {
  return (_ctx, next) => shapes.run(true, next);
}

/** `fields` when the duplicates are on, else nothing (spread into an answer). */
export function puppyOneOnly<T extends object>(fields: () => T): Partial<T> {
  return puppyOneShapes() ? fields() : {};
}
