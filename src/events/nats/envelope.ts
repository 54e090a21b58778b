import type { BusMessage, BusSignal } from '../changeBus.ts';
import type { CommitEvent } from '../commitEvent.ts';

/**
 * A bus message as stored in the stream: JSON of the message and the `origin` that published it
 * (a node's or worker's name), so that a process skips what it sent itself.
 */
export interface Envelope {
  origin: string;
  message: BusMessage;
}

const SIGNAL_KINDS: ReadonlySet<BusSignal['kind']> = new Set(['project-deleted', 'project-reset', 'publish-changed', 'access-changed', 'placement-changed']);

export function encodeEnvelope(origin: string, message: BusMessage): Uint8Array {
  const body = 'commit' in message ? { origin, commit: message.commit } : { origin, signal: message.signal };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** The envelope in `data`, or the reason it is not one (what another version or a stray publisher put on the stream). */
export function decodeEnvelope(data: Uint8Array): Envelope | { invalid: string } {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return { invalid: 'not JSON' };
  }
  if (!isRecord(body) || typeof body.origin !== 'string') return { invalid: 'no origin' };
  // Rebuilt field by field: what reaches subscribers is exactly the plain data they expect.
  const { commit, signal } = body;
  if (isCommitEvent(commit)) return { origin: body.origin, message: { commit: { project: commit.project, commit: commit.commit, seq: commit.seq, at: commit.at } } };
  if (isSignal(signal)) return { origin: body.origin, message: { signal: { kind: signal.kind, project: signal.project } } };
  return { invalid: 'neither a commit event nor a signal' };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCommitEvent(v: unknown): v is CommitEvent {
  return (
    isRecord(v) &&
    typeof v.project === 'string' &&
    (typeof v.commit === 'string' || v.commit === null) &&
    typeof v.seq === 'number' &&
    Number.isSafeInteger(v.seq) &&
    typeof v.at === 'string'
  );
}

function isSignal(v: unknown): v is BusSignal {
  return isRecord(v) && typeof v.kind === 'string' && SIGNAL_KINDS.has(v.kind as BusSignal['kind']) && typeof v.project === 'string';
}
