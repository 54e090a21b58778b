import type { Context } from 'koa';
import { z } from 'zod';
import type { Logger } from '../logging/logger.ts';
import { ZERO_OID } from './pushedChanges.ts';
import { MAIN_REF } from './pushRules.ts';
import type { PushSessions } from './pushSessions.ts';
import { validatePush, type PushValidatorDeps } from './pushValidator.ts';

const OID = z.string().regex(/^[0-9a-f]{40}$/);
const hookBody = z.object({
  updates: z.array(z.object({ oldOid: OID, newOid: OID, ref: z.string().min(1).max(4096) })).max(1000),
  quarantine: z.string().max(4096),
});

const MAX_BODY = 1024 * 1024;

/**
 * Answers the pre-receive hook of a push in flight (identified by the secret the service gave
 * it): `{ok, problems}`. Any failure to decide is a refusal, so a push is never let through
 * unchecked.
 */
export async function answerPreReceive(ctx: Context, sessions: PushSessions, deps: PushValidatorDeps, logger: Logger): Promise<void> {
  const session = sessions.find(ctx.get('x-cns-push-secret'));
  if (!session) {
    ctx.status = 403;
    ctx.body = { ok: false, problems: ['this push is not known to the service.'] };
    return;
  }
  let problems: string[];
  try {
    const parsed = hookBody.safeParse(JSON.parse((await readBody(ctx)).toString('utf8')));
    if (!parsed.success) problems = ['the hook sent an unreadable request.'];
    else {
      const verdict = await validatePush(deps, session, parsed.data.updates, parsed.data.quarantine);
      problems = verdict.problems;
      // Only an update of main moves main; refs/for/main is merged by the proc-receive hook.
      const main = parsed.data.updates.find((u) => u.ref === MAIN_REF);
      if (problems.length === 0 && main) {
        session.accepted = { before: main.oldOid === ZERO_OID ? null : main.oldOid, after: main.newOid, commits: verdict.commits };
        session.onAccept?.(session.accepted);
      }
    }
  } catch (err) {
    logger.error({ err, project_id: session.projectId }, 'checking a push failed');
    problems = ['the service could not check this push; nothing was changed.'];
  }
  ctx.status = 200;
  ctx.body = { ok: problems.length === 0, problems };
}

async function readBody(ctx: Context): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error('hook request too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
