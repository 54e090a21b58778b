import type { Context } from 'koa';
import { z } from 'zod';
import type { ContentStore } from '../content/contentStore.ts';
import { isContentError } from '../errors/contentErrors.ts';
import type { Logger } from '../logging/logger.ts';
import { MergeRefused, planPushMerge } from './pushMerge.ts';
import { FOR_MAIN_REF } from './pushRules.ts';
import type { PushSessions } from './pushSessions.ts';

const OID = z.string().regex(/^[0-9a-f]{40}$/);
const hookBody = z.object({ updates: z.array(z.object({ oldOid: OID, newOid: OID, ref: z.string().min(1).max(4096) })).max(100) });

export const PROC_RECEIVE_PATH = '/git/_hooks/proc-receive';

interface Result {
  ref: string;
  ok: boolean;
  reason?: string;
}

/**
 * Answers the proc-receive hook of a push to refs/for/main (after pre-receive accepted it and
 * its objects are in the repository): each pushed commit is merged into main by ONE commit made
 * through the content store's serialized writer, attributed to the pusher, with the pushed
 * commit as second parent. Main is never fast-forwarded by git here, so API writes cannot make
 * the push fail ("fetch first"); only a real conflict refuses it, naming the paths.
 */
export async function answerProcReceive(ctx: Context, sessions: PushSessions, content: ContentStore, logger: Logger): Promise<void> {
  const session = sessions.find(ctx.get('x-cns-push-secret'));
  if (!session || !session.actor) {
    ctx.status = 403;
    ctx.body = { results: [], messages: ['this push is not known to the service.'] };
    return;
  }
  const parsed = hookBody.safeParse(ctx.request.body ?? (await readJson(ctx)));
  if (!parsed.success) {
    ctx.status = 200;
    ctx.body = { results: [], messages: ['the hook sent an unreadable request.'] };
    return;
  }
  const results: Result[] = [];
  const messages: string[] = [];
  for (const u of parsed.data.updates) {
    if (u.ref !== FOR_MAIN_REF) {
      results.push({ ref: u.ref, ok: false, reason: `only ${FOR_MAIN_REF} is merged by the service` });
      continue;
    }
    try {
      const r = await content.commitPlanned(session.projectId, session.actor, (tip) => planPushMerge(content, session.projectId, session.gitdir, tip, u.newOid));
      if (!r || !r.changed || !r.commitId) {
        messages.push(`nothing to merge: main already has the content of ${u.newOid.slice(0, 12)}.`);
        results.push({ ref: u.ref, ok: true });
        continue;
      }
      messages.push(`merged ${u.newOid.slice(0, 12)} into main as ${r.commitId.slice(0, 12)} (project version ${r.projectVersion}, ${r.nodes.length} node(s) changed).`);
      messages.push('run `git pull` to get the merge commit.');
      // Plain `ok`: reporting main's new tip would make the client update origin/main to a
      // commit it does not have; `git pull` fetches it.
      results.push({ ref: u.ref, ok: true });
    } catch (err) {
      if (err instanceof MergeRefused) {
        messages.push(err.message, ...err.paths.map((p) => `  ${p}`), 'fetch main, merge or rebase, resolve the conflicts and push again.');
        results.push({ ref: u.ref, ok: false, reason: err.paths.length ? `merge conflict in ${err.paths.length} path(s)` : err.message });
      } else if (isContentError(err)) {
        messages.push(`the merge was refused: ${(err as Error).message}`);
        results.push({ ref: u.ref, ok: false, reason: (err as Error).message });
      } else {
        logger.error({ err, project_id: session.projectId }, 'merging a push to refs/for/main failed');
        messages.push('the service could not merge this push; main was not changed.');
        results.push({ ref: u.ref, ok: false, reason: 'merge failed' });
      }
    }
  }
  ctx.status = 200;
  ctx.body = { results, messages };
}

async function readJson(ctx: Context): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 1024 * 1024) return null;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return null;
  }
}
