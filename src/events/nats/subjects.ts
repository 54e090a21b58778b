import type { BusMessage } from '../changeBus.ts';

/**
 * Where each bus message goes in the stream, and the id JetStream deduplicates it by. Subjects are
 * `cns.commit.<project>` and `cns.signal.<kind>.<project>`; project ids (`prj_` and [0-9a-z]) and
 * signal kinds are already valid subject tokens, and anything else is encoded so that it cannot
 * add tokens or wildcards (a `.`, `*`, `>` or a space would).
 */
export const BUS_SUBJECTS = ['cns.commit.*', 'cns.signal.*.*'];

const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/** `token` itself if it is a plain token; otherwise `~` and the hex of its UTF-8 bytes (no plain token starts with `~`, so no two values meet). */
export function subjectToken(token: string): string {
  return SAFE_TOKEN.test(token) ? token : `~${Buffer.from(token, 'utf8').toString('hex')}`;
}

export function subjectOf(message: BusMessage): string {
  return 'commit' in message
    ? `cns.commit.${subjectToken(message.commit.project)}`
    : `cns.signal.${subjectToken(message.signal.kind)}.${subjectToken(message.signal.project)}`;
}

/**
 * The `Nats-Msg-Id` of a commit: the same commit published twice (by two workers, or again after
 * a failover) is stored once within the stream's duplicate window. Signals carry no identity of
 * their own, so each gets a random id, kept across its retries.
 */
export function commitMessageId(commit: { project: string; seq: number; commit: string | null }): string {
  return `${subjectToken(commit.project)}:${commit.seq}:${commit.commit === null ? '-' : subjectToken(commit.commit)}`;
}
