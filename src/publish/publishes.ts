import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';
import { newPublishKey } from './publishKey.ts';
import type { PublishChanges, PublishRecord, PublishStore } from './publishStore.ts';

export interface PublishesDeps {
  store: PublishStore;
  content: Pick<ContentStore, 'findById' | 'getVersion'>;
  access: Pick<ContentAccess, 'requireNode' | 'mayNode'>;
}

/** A publish with its node as it is now (null: permanently deleted). */
export interface PublishView {
  record: PublishRecord;
  node: NodeInfo | null;
}

export interface NewPublish {
  version?: number;
  expiresAt?: string;
  slug?: string;
}

/** `null` clears expires_at, version (back to the latest) and slug. */
export interface PublishUpdate {
  enabled?: boolean;
  expiresAt?: string | null;
  version?: number | null;
  slug?: string | null;
}

const publishNotFound = () => new DomainError('NOT_FOUND', 'Publish not found.');

/**
 * Publishing (spec 4.10): a node of a project made readable without a credential under an
 * unguessable key. Publishing, changing and unpublishing need content:write on the node (the
 * content-access policy: a key only publishes inside its scope); listing needs content:read and
 * shows the publishes of nodes the caller may see. The caller's grant on the project comes from
 * the route's check; what is checked here is the node under it. What the public sees is in
 * publicTarget.ts.
 */
export class Publishes {
  constructor(private readonly d: PublishesDeps) {}

  /** Publishes `node`, reached with `g` (content:write): the route found both. */
  async create(g: ContentGrant, node: NodeInfo, input: NewPublish): Promise<PublishView> {
    if (node.state !== 'active') throw new DomainError('CONFLICT', 'The node is in the trash; restore it before publishing it.', { node_id: node.id });
    if (input.version !== undefined) this.checkPin(node, input.version);
    const record = await this.d.store.create({
      project_id: g.projectId,
      node_id: node.id,
      publish_key: newPublishKey(),
      slug: input.slug ?? null,
      version: input.version ?? null,
      enabled: true,
      expires_at: input.expiresAt === undefined ? null : futureTime(input.expiresAt),
      created_by: g.actor.id,
    });
    return { record, node };
  }

  /** The project's publishes whose nodes `g` (content:read on the project) reaches. */
  async list(g: ContentGrant): Promise<PublishView[]> {
    return (await this.d.store.listByProject(g.projectId)).flatMap((record) => {
      const node = this.nodeOf(record);
      return this.visible(g, node) ? [{ record, node }] : [];
    });
  }

  get(g: ContentGrant, record: PublishRecord): PublishView {
    return this.reach(g, record);
  }

  async update(g: ContentGrant, record: PublishRecord, changes: PublishUpdate): Promise<PublishView> {
    const { node } = this.reach(g, record);
    if (changes.version !== undefined && changes.version !== null) {
      if (!node) throw new DomainError('CONFLICT', 'The published node was permanently deleted; no version can be pinned.', { node_id: record.node_id });
      this.checkPin(node, changes.version);
    }
    const next: PublishChanges = {
      enabled: changes.enabled,
      version: changes.version,
      slug: changes.slug,
      expires_at: changes.expiresAt === undefined || changes.expiresAt === null ? changes.expiresAt : futureTime(changes.expiresAt),
    };
    return { record: await this.d.store.update(record, next), node };
  }

  async delete(g: ContentGrant, record: PublishRecord): Promise<PublishView> {
    const view = this.reach(g, record);
    await this.d.store.delete(record);
    return view;
  }

  /** The record by id, whoever asks (the routes' check is made on its project; reports name publishes they have counted). */
  find(id: string): Promise<PublishRecord | null> {
    return this.d.store.find(id);
  }

  /** The records of these ids that exist, whoever asks (reports name the publishes they have counted). */
  findMany(ids: readonly string[]): Promise<PublishRecord[]> {
    return this.d.store.findMany(ids);
  }

  /**
   * A publish of the grant's project the caller may act on: it must see the node (a node in the
   * trash counts at the path it was deleted from; a permanently deleted node's publish needs a
   * grant over the whole project).
   */
  private reach(g: ContentGrant, record: PublishRecord): PublishView {
    if (record.project_id !== g.projectId) throw publishNotFound();
    const node = this.nodeOf(record);
    if (node) this.d.access.requireNode(g, node);
    else if (g.scope !== '') throw new DomainError('FORBIDDEN', 'The published node was permanently deleted; only a caller who reaches the whole project can change this publish.');
    return { record, node };
  }

  private visible(g: ContentGrant, node: NodeInfo | null): boolean {
    return node ? this.d.access.mayNode(g, node) : g.scope === '';
  }

  /** The node of a publish as it is now, or null when it is gone from the project. */
  private nodeOf(record: PublishRecord): NodeInfo | null {
    const node = this.d.content.findById(record.node_id);
    return node && node.projectId === record.project_id ? node : null;
  }

  /** A pin names an existing version of a json, markdown or file node (a folder's versions are trees: it is served as it is now). */
  private checkPin(node: NodeInfo, version: number): void {
    if (node.type === 'folder') throw invalidField('version', 'a folder is always published as it is now; pin versions of json, markdown and file nodes');
    try {
      this.d.content.getVersion(node.projectId, { id: node.id }, version);
    } catch (e) {
      if ((e as { code?: string }).code === 'NOT_FOUND') throw invalidField('version', `version ${version} of this node does not exist (it is at version ${node.version})`);
      throw e;
    }
  }
}

/** An expiry must lie in the future (disable a publish with enabled: false). */
function futureTime(iso: string): string {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) throw invalidField('expires_at', 'expires_at must be an ISO 8601 date and time');
  if (at <= Date.now()) throw invalidField('expires_at', 'expires_at must be in the future (to stop a publish now, set enabled to false)');
  return new Date(at).toISOString();
}
