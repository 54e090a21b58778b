import type { Mutation } from '../../content/contentStore.ts';
import type { WriteTimeGrants } from '../../policies/writeTimeGrant.ts';

/** A write the policy refused when it was about to be made: the run stops there; `code` is the policy's. */
export class WriteRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'WriteRefused';
  }
}

/**
 * The sync's key (its connection id) as it stands now may write `paths` of the project: asked
 * of the one policy (WriteTimeGrants) at each write of a run. Else a WriteRefused: UNAUTHORIZED
 * when the key is revoked, paused or deleted, the policy's FORBIDDEN or NOT_FOUND otherwise.
 */
export async function requireWrite(grants: Pick<WriteTimeGrants, 'require'>, syncId: string, projectId: string, paths: readonly string[]): Promise<void> {
  try {
    await grants.require({ kind: 'key', id: syncId }, projectId, paths);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') throw e;
    throw new WriteRefused(code, (e as Error).message);
  }
}

/** What a run's record says went wrong: a refusal is led by its code (`FORBIDDEN: …`), anything else is its message. */
export function runError(err: unknown): string {
  return err instanceof WriteRefused ? `${err.code}: ${err.message}` : (err as Error).message;
}

/** Every project path a page's mutations touch. */
export function pathsOf(mutations: readonly Mutation[]): string[] {
  return mutations.flatMap((m) => (m.op === 'move' ? [m.from, m.to] : 'path' in m ? [m.path] : []));
}
