import type { BusMessage } from '../events/changeBus.ts';
import type { RateTakes } from './rateShare.ts';

/** A worker as the primary announces it to the others. */
export interface Member {
  /** Stable name of the slot: w1, w2, … (logs, /healthz, placement). */
  name: string;
  /** This incarnation of the slot, the lease holder id (a restarted worker is a new holder). */
  holder: string;
  pid: number;
  /** Its private loopback port: forwarded requests and git hook callbacks. */
  port: number;
  startedAt: string;
  /** Times this slot was restarted after its process died. */
  restarts: number;
}

/** Primary → worker. A `conn` message carries the client's socket as its handle. */
export type ToWorker =
  | { t: 'members'; members: Member[] }
  /** The bytes the primary read of the next connection handed over (latin1). */
  | { t: 'head'; head: string }
  /** A connection (its socket is the message's handle); its bytes came in the 'head' just before. */
  | { t: 'conn' }
  | { t: 'bus'; msg: BusMessage }
  | { t: 'rate'; takes: RateTakes }
  | { t: 'stop' }
  /** The first worker has prepared the data folder: a worker started beside it may open it now. */
  | { t: 'go' }
  /** Are you alive? (answered with a pong by the worker's event loop) */
  | { t: 'ping' };

/** What a first worker reports of the data folder's first start, for the primary to print once. */
export interface FirstStart {
  email: string;
  generatedPassword: string | null;
}

/** Worker → primary. */
export type ToPrimary =
  | { t: 'ready'; port: number; firstStart: FirstStart | null; baseUrl: string }
  | { t: 'failed'; message: string }
  /** The whole service must stop (a cluster node whose id another run took): the reason, for the operator. */
  | { t: 'fatal'; message: string }
  | { t: 'held'; project: string }
  /** The worker has the connection handed to it last (the primary closes its copy then). */
  | { t: 'took' }
  | { t: 'pong' }
  | { t: 'bus'; msg: BusMessage }
  | { t: 'rate'; takes: RateTakes };
