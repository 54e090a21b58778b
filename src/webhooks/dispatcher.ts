import type { SecretBox } from '../auth/secretBox.ts';
import type { Logger } from '../logging/logger.ts';
import type { DeliveryRecord, DeliveryStore } from './deliveryStore.ts';
import type { HookStore } from './hookStore.ts';
import { sendOnce, type Attempt } from './sender.ts';
import type { AttemptOutcome } from './deliveryStore.ts';

export interface DispatcherSettings {
  timeoutMs: number;
  backoffMs: number;
  backoffMaxMs: number;
  retryForMs: number;
  disableAfterMs: number;
  concurrency: number;
  /** Finished deliveries kept per hook (the log). */
  keepDeliveries: number;
}

export interface DispatcherDeps {
  hooks: HookStore;
  deliveries: DeliveryStore;
  box: SecretBox;
  settings: () => DispatcherSettings;
  allowPrivate: () => boolean;
  logger: Logger;
  /** One attempt (sendOnce; a test may count them). */
  send?: (a: Attempt) => Promise<AttemptOutcome>;
  /**
   * Several workers (issue 29): whether this process sends the project's deliveries (it owns the
   * project, or takes it now). Absent: every project's, as the one process.
   */
  adopt?: (projectId: string) => boolean;
  /** Looks at the queue at least this often (several workers: deliveries queued or left by another process); absent: only when told or due. */
  pollMs?: number;
}

/** How long an attempt's claim lasts beyond its time limit (a process that died mid-attempt is retried after it). */
const CLAIM_MARGIN_MS = 60_000;

/**
 * Sends queued deliveries: each hook's oldest pending one, one at a time per hook (so a hook
 * receives its deliveries in commit order), up to `concurrency` hooks at once. A failure or a
 * timeout is retried with exponential backoff until `retryForMs` after the first attempt, then
 * the delivery is failed and the next one goes; a hook failing `disableAfterMs` in a row is
 * disabled. Everything it knows is in the metadata store: after a restart `start` picks up
 * where it was. Network waits and statements are asynchronous, so it never holds the event loop;
 * one look at the queue runs at a time (a kick meanwhile looks again once it is done).
 */
export class Dispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private kickScheduled = false;
  private running = false;
  /** The look at the queue going on, and whether another was asked for meanwhile. */
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  /** Per hook, when its log was last pruned (at most once a minute). */
  private readonly pruned = new Map<string, number>();

  constructor(private readonly d: DispatcherDeps) {}

  start(): void {
    this.running = true;
    this.kick();
  }

  /** New deliveries, or a hook switched on: look again on the next turn of the event loop. */
  kick(): void {
    if (!this.running || this.kickScheduled) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      this.pump();
    });
  }

  /** Stops sending; attempts in flight finish and are recorded (the rest stay pending for the next start). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pumping;
    await Promise.all([...this.inFlight.values()]);
  }

  /** Deliveries being attempted now (health, tests). */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Looks at the queue (one look at a time: asked for during one, another follows it). */
  private pump(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.look()
      .catch((err: unknown) => this.d.logger.error({ err }, 'webhook queue could not be read'))
      .finally(() => {
        this.pumping = null;
        if (!this.pumpAgain) return;
        this.pumpAgain = false;
        this.pump();
      });
  }

  private async look(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const s = this.d.settings();
    const now = Date.now();
    let nextDue = Infinity;
    // A failure is logged (pump); the next kick looks again.
    const heads = await this.d.deliveries.heads();
    if (this.d.pollMs) nextDue = now + this.d.pollMs;
    for (const head of heads) {
      // Stopped meanwhile: nothing more is claimed.
      if (!this.running) return;
      if (this.inFlight.has(head.hook_id)) continue;
      if (this.d.adopt && !this.d.adopt(head.project_id)) continue;
      if (head.next_attempt_at > now) {
        nextDue = Math.min(nextDue, head.next_attempt_at);
        continue;
      }
      // Full: a finishing attempt kicks the pump again.
      if (this.inFlight.size >= s.concurrency) break;
      // Another process sending it (an owner handing the project over): not sent twice.
      try {
        if (!(await this.d.deliveries.claim(head.id, head.next_attempt_at, now + s.timeoutMs + CLAIM_MARGIN_MS))) continue;
      } catch (err) {
        this.d.logger.error({ err, hook: head.hook_id, delivery: head.id }, 'webhook delivery could not be claimed');
        continue;
      }
      const p = this.attempt(head, s).finally(() => {
        this.inFlight.delete(head.hook_id);
        this.kick();
      });
      this.inFlight.set(head.hook_id, p);
    }
    if (nextDue !== Infinity && this.running) {
      this.timer = setTimeout(() => this.pump(), Math.max(0, nextDue - now));
      this.timer.unref();
    }
  }

  private async prune(hookId: string, keep: number): Promise<void> {
    const now = Date.now();
    if (now - (this.pruned.get(hookId) ?? 0) < 60_000) return;
    this.pruned.set(hookId, now);
    await this.d.deliveries.prune(hookId, keep);
  }

  private async attempt(delivery: DeliveryRecord, s: DispatcherSettings): Promise<void> {
    try {
      const hook = await this.d.hooks.find(delivery.hook_id);
      if (!hook) return;
      let secret: Buffer | null = null;
      try {
        secret = this.d.box.open(hook.secret_sealed, hook.id);
      } catch {
        // A data folder moved without its signing secret: a failure like any other, retried and shown.
      }
      const outcome = secret
        ? await (this.d.send ?? sendOnce)({
            url: hook.url,
            secret,
            event: delivery.event,
            deliveryId: delivery.id,
            body: delivery.body,
            timeoutMs: s.timeoutMs,
            allowPrivate: this.d.allowPrivate(),
          })
        : { at: Date.now(), ok: false, responseStatus: null, responseBody: null, durationMs: 0, error: "the hook's secret cannot be opened (set a new one)" };
      // Deleted while the attempt was going on: nothing left to record.
      if (!(await this.d.hooks.find(hook.id))) return;
      if (outcome.ok) {
        await this.d.deliveries.recordAttempt(delivery.id, outcome, null);
        await this.d.hooks.markSucceeded(hook.id);
        await this.prune(hook.id, s.keepDeliveries);
        return;
      }
      const first = delivery.first_attempt_at ?? outcome.at;
      const deadline = first + s.retryForMs;
      const backoff = Math.min(s.backoffMaxMs, s.backoffMs * 2 ** Math.min(delivery.attempts, 30));
      // The wait counts from the attempt's end (a slow failure is not retried at once).
      const ended = outcome.at + outcome.durationMs;
      // The last retry is made at the deadline; one failing after it fails the delivery.
      const next = ended >= deadline ? null : Math.min(deadline, ended + backoff);
      await this.d.deliveries.recordAttempt(delivery.id, outcome, next);
      if (next === null) await this.prune(hook.id, s.keepDeliveries);
      const failingSince = await this.d.hooks.markFailing(hook.id, outcome.at);
      if (ended - failingSince >= s.disableAfterMs) {
        await this.d.hooks.disable(hook.id, 'failing');
        this.d.logger.warn({ hook: hook.id, project: hook.project_id }, 'webhook disabled: its deliveries failed for too long');
      }
    } catch (err) {
      this.d.logger.error({ err, hook: delivery.hook_id, delivery: delivery.id }, 'webhook delivery attempt crashed');
      // Not again at once: the hook waits a backoff before its next attempt.
      try {
        await this.d.deliveries.postpone(delivery.id, Date.now() + s.backoffMs);
      } catch {
        // The database is gone (shutdown): the delivery stays pending for the next start.
      }
    }
  }
}
