import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../auth/secretBox.ts';
import { normalizePath } from '../content/paths.ts';
import type { Changelog } from '../events/changelog.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import { checkDestination, isRefusal } from '../net/outboundGuard.ts';
import type { ProjectAccess } from '../policies/authorize.ts';
import { projectRoleAllows } from '../policies/permissions.ts';
import { pathInScope } from '../policies/scope.ts';
import { newId } from '../util/ids.ts';
import { redactUrl } from '../logging/redact.ts';
import type { DeliveryRecord, DeliveryStatus, DeliveryStore } from './deliveryStore.ts';
import type { HookRecord, HookStore } from './hookStore.ts';
import { PING_EVENT } from './events.ts';
import { eventBody, withDeliveryId } from './payload.ts';
import { sendOnce, type Attempt } from './sender.ts';
import type { AttemptOutcome } from './deliveryStore.ts';

/** Who manages a project's hooks through a request: every hook (a project admin) or its own (an access key). */
export interface HookManager {
  projectId: string;
  creator: { kind: 'user' | 'key'; id: string };
  /** What the manager may read ('' = the whole project): a hook's path_prefix lies inside it. */
  scope: string;
  /** A project admin sees every hook of the project; a key only those it created. */
  all: boolean;
}

export interface HookInput {
  url: string;
  events: string[];
  pathPrefix?: string;
  active?: boolean;
  secret?: string;
}

export interface WebhooksDeps {
  hooks: HookStore;
  deliveries: DeliveryStore;
  box: SecretBox;
  changelog: Pick<Changelog, 'latest'>;
  allowPrivate: () => boolean;
  timeoutMs: () => number;
  /** Deliveries were queued or a hook switched on: the dispatcher looks again. */
  kick: () => void;
  send?: (a: Attempt) => Promise<AttemptOutcome>;
}

const notFound = () => new DomainError('NOT_FOUND', 'Webhook not found.');

/**
 * Managing a project's outgoing webhooks. Project admins manage all of them; an access key (an
 * `api` key, read or read_write) manages the ones it created, inside its scope. A hook acts as
 * its creator: it is sent only what the creator may read now (see queue.ts), so a key limited
 * to a folder never hears of anything outside it.
 */
export class Webhooks {
  constructor(private readonly d: WebhooksDeps) {}

  /** The caller as a manager of the project's hooks (403 for members below admin and for agent or sync keys). */
  manager(access: ProjectAccess): HookManager {
    const { principal, project } = access;
    if (principal.kind === 'user') {
      if (!access.role || !projectRoleAllows(access.role, 'project:update')) {
        throw new DomainError('FORBIDDEN', `Your role (${access.role}) on this project does not allow managing webhooks: project admins do.`);
      }
      return { projectId: project.id, creator: { kind: 'user', id: principal.id }, scope: '', all: true };
    }
    if (principal.connection.kind !== 'api') throw new DomainError('FORBIDDEN', 'Only access keys (kind api) and project admins manage webhooks.');
    return { projectId: project.id, creator: { kind: 'key', id: principal.id }, scope: access.scope, all: false };
  }

  async create(m: HookManager, input: HookInput): Promise<{ hook: HookRecord; secret: string }> {
    const url = await this.checkUrl(input.url);
    const pathPrefix = this.checkPrefix(m, input.pathPrefix ?? m.scope);
    const secret = input.secret ?? randomBytes(32).toString('base64url');
    const hook = await this.d.hooks.create({
      projectId: m.projectId,
      url,
      events: dedupe(input.events),
      pathPrefix,
      active: input.active ?? true,
      creator: m.creator,
      // Hooks hear of what happens from now on.
      cursor: this.d.changelog.latest(m.projectId),
      seal: (id) => this.d.box.seal(secret, id),
    });
    return { hook, secret };
  }

  list(m: HookManager): Promise<HookRecord[]> {
    return this.d.hooks.list(m.projectId, m.all ? undefined : m.creator);
  }

  /** One hook the manager may see (another project's, or another key's, is 404). */
  async get(m: HookManager, hookId: string): Promise<HookRecord> {
    const h = await this.d.hooks.find(hookId);
    if (!h || h.project_id !== m.projectId) throw notFound();
    if (!m.all && (h.creator_kind !== m.creator.kind || h.creator_id !== m.creator.id)) throw notFound();
    return h;
  }

  /** Changes a hook; `secret: null` makes a new one. Answers the new secret when it changed. */
  async update(m: HookManager, hookId: string, c: Partial<Omit<HookInput, 'secret'>> & { secret?: string | null }): Promise<{ hook: HookRecord; secret: string | null }> {
    const h = await this.get(m, hookId);
    const url = c.url !== undefined ? await this.checkUrl(c.url) : undefined;
    const pathPrefix = c.pathPrefix !== undefined ? this.checkPrefix(m, c.pathPrefix) : undefined;
    const secret = c.secret === undefined ? null : (c.secret ?? randomBytes(32).toString('base64url'));
    // Switched back on: what happened while it was off is not sent; what was queued before still is.
    const on = c.active === true && (!h.active || h.disabled_at !== null);
    const hook = await this.d.hooks.update(h.id, {
      url,
      events: c.events ? dedupe(c.events) : undefined,
      pathPrefix,
      active: c.active,
      secretSealed: secret === null ? undefined : this.d.box.seal(secret, h.id),
      cursor: on ? this.d.changelog.latest(h.project_id) : undefined,
    });
    if (on) this.d.kick();
    return { hook, secret };
  }

  async delete(m: HookManager, hookId: string): Promise<void> {
    await this.d.hooks.delete((await this.get(m, hookId)).id);
  }

  async deliveries(m: HookManager, hookId: string, page: { limit: number; offset: number; status?: DeliveryStatus }): Promise<{ items: DeliveryRecord[]; total: number }> {
    return await this.d.deliveries.list((await this.get(m, hookId)).id, page);
  }

  /** Queues the same body again under a new delivery id, after what the hook has pending. */
  async redeliver(m: HookManager, hookId: string, deliveryId: string): Promise<DeliveryRecord> {
    const h = await this.get(m, hookId);
    const original = await this.d.deliveries.find(deliveryId);
    if (!original || original.hook_id !== h.id) throw new DomainError('NOT_FOUND', 'Delivery not found.');
    if (original.status === 'pending') throw new DomainError('CONFLICT', 'This delivery is still pending: it will be attempted again on its own.');
    if (original.event === PING_EVENT) throw new DomainError('CONFLICT', 'A ping is not redelivered: ping again.');
    const id = newId('dlv');
    const d = await this.d.deliveries.insert({ id, hookId: h.id, event: original.event, projectVersion: original.project_version, body: withDeliveryId(original.body, id, original.id), redeliveryOf: original.id });
    this.d.kick();
    return d;
  }

  /** Sends a `ping` now (whatever the hook subscribed to, active or not), once, and records it. */
  async ping(m: HookManager, hookId: string): Promise<DeliveryRecord> {
    const h = await this.get(m, hookId);
    const id = newId('dlv');
    const body = eventBody(PING_EVENT, h.project_id, id, { hook: { id: h.id, url: redactUrl(h.url), events: h.events, path_prefix: h.path_prefix } });
    const outcome = await (this.d.send ?? sendOnce)({
      url: h.url,
      secret: this.d.box.open(h.secret_sealed, h.id),
      event: PING_EVENT,
      deliveryId: id,
      body,
      timeoutMs: this.d.timeoutMs(),
      allowPrivate: this.d.allowPrivate(),
    });
    // Recorded once the attempt is over, never pending: the dispatcher does not see it.
    await this.d.deliveries.insert({ id, hookId: h.id, event: PING_EVENT, projectVersion: null, body, status: 'failed' });
    // Gone when the hook was deleted while it was pinged.
    const recorded = await this.d.deliveries.recordAttempt(id, outcome, null);
    if (!recorded) throw notFound();
    return recorded;
  }

  pendingCount(hookId: string): Promise<number> {
    return this.d.deliveries.pendingCount(hookId);
  }

  recent(hookIds: string[], per: number): Promise<Map<string, DeliveryRecord[]>> {
    return this.d.deliveries.recent(hookIds, per);
  }

  private async checkUrl(address: string): Promise<string> {
    try {
      return (await checkDestination(address, this.d.allowPrivate())).toString();
    } catch (e) {
      if (!isRefusal(e)) throw e;
      throw invalidField('url', `The webhook url is refused: ${e.message} (only public http(s) addresses, unless the operator sets CNS_URL_FETCH_ALLOW_PRIVATE).`);
    }
  }

  private checkPrefix(m: HookManager, input: string): string {
    const p = normalizePath(input, 'path_prefix');
    if (!pathInScope(m.scope, p)) throw invalidField('path_prefix', `path_prefix must lie inside this key's scope ("${m.scope}").`);
    return p;
  }
}

const dedupe = (events: string[]) => [...new Set(events)];
