import type { ContentStore, NodeInfo, VersionInfo } from '../content/contentStore.ts';
import type { ChangeBus } from '../events/changeBus.ts';
import { DomainError } from '../errors/domainError.ts';
import { Lru } from '../content/lru.ts';
import type { PublishRecord, PublishStore } from './publishStore.ts';

/** What a public address serves: the publish, its node, and the node asked for (itself or one beneath a published folder). */
export interface PublicTarget {
  publish: PublishRecord;
  root: NodeInfo;
  node: NodeInfo;
  /** The node's path relative to the published folder ('' for the published node itself). */
  relPath: string;
  /** The pinned version (null: the node as it is now). */
  pinned: VersionInfo | null;
}

/**
 * The one answer to every public address that serves nothing: unknown, disabled, expired or
 * deleted publish, a node that is gone, a path outside the published folder. The same body
 * whatever the cause, so a client learns nothing about what exists.
 */
export const publicNotFound = () => new DomainError('NOT_FOUND', 'Not found.');

/**
 * The segments of a path below a public address, decoded one by one. A segment that is empty,
 * `.` or `..`, or that decodes to something holding `/`, `\` or NUL (`%2F`, `%2e%2e`, …) would
 * leave the published folder or name it twice: null (404).
 */
export function subPathSegments(rawRest: string): string[] | null {
  if (rawRest === '' || rawRest === '/') return [];
  const parts = rawRest.replace(/^\//, '').replace(/\/$/, '').split('/');
  const out: string[] = [];
  for (const raw of parts) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (seg === '' || seg === '.' || seg === '..' || /[/\\\0]/.test(seg)) return null;
    out.push(seg);
  }
  return out;
}

type Content = Pick<ContentStore, 'findById' | 'findByPath' | 'getVersion'>;

/** A published node as last looked up, with what tells whether it is still current. */
interface Cached {
  publish: PublishRecord;
  expiresAt: number;
  root: NodeInfo | null;
  pinned: VersionInfo | null;
  revision: number;
  generation: number;
  at: number;
}

/** Addresses whose publish and node are kept in memory. */
const CACHED_ADDRESSES = 4096;
/**
 * The longest a looked-up publish is trusted without looking again. Writes of publishes, commits,
 * deletion, reindex or purge of the project (here or in another worker, over the change bus)
 * make it stale at once; this bounds what nothing announces (a row changed outside the service).
 */
const TRUST_MS = 2000;

/**
 * Resolves public addresses to what they may serve, or throws the uniform 404. Only the
 * published node and, for a folder, the active nodes beneath it are reachable: every other node
 * of the project stays unreachable whatever the path says. The publish and its node are kept in
 * memory per address (a public page is read far more often than it changes), checked against the
 * publish store's revision and the project's commits on every request.
 */
export class PublicResolver {
  private readonly cache = new Lru<string, Cached>(CACHED_ADDRESSES);
  /** Bumped by every commit of a project, a change of its publishes, its deletion, reindex or purge (in any process). */
  private readonly generations = new Map<string, number>();
  /** Bumped with every generation: a look-up that saw it move while it awaited the store does not trust what it read. */
  private stales = 0;

  constructor(
    private readonly store: Pick<PublishStore, 'findByAddress' | 'revision'>,
    private readonly content: Content,
    bus: Pick<ChangeBus, 'subscribe' | 'onSignal'>,
  ) {
    bus.subscribe('publish-cache', (e) => this.stale(e.project));
    // Publishes changed by any process (this one's store counts its own writes too), and projects deleted, reindexed or purged.
    bus.onSignal('publish-cache', (s) => {
      if (s.kind !== 'access-changed' && s.kind !== 'placement-changed') this.stale(s.project);
    });
  }

  /** What is cached of the project's publishes is looked up again on the next request. */
  private stale(projectId: string): void {
    this.generations.set(projectId, (this.generations.get(projectId) ?? 0) + 1);
    this.stales++;
  }

  async resolve(address: string, segments: string[] | null, now = Date.now()): Promise<PublicTarget> {
    if (segments === null) throw publicNotFound();
    const { publish, root, pinned, expiresAt } = await this.lookUp(address, now);
    if (!publish.enabled || expiresAt <= now || !root) throw publicNotFound();
    if (segments.length === 0) return { publish, root, node: root, relPath: '', pinned };
    if (root.type !== 'folder') throw publicNotFound();
    const relPath = segments.join('/');
    let node: NodeInfo | null;
    try {
      node = this.content.findByPath(root.projectId, `${root.path}/${relPath}`);
    } catch {
      node = null;
    }
    if (!node || node.state !== 'active' || !node.path.startsWith(`${root.path}/`)) throw publicNotFound();
    return { publish, root, node, relPath, pinned: null };
  }

  private async lookUp(address: string, now: number): Promise<Cached> {
    const hit = this.cache.get(address);
    if (hit && hit.revision === this.store.revision && hit.generation === (this.generations.get(hit.publish.project_id) ?? 0) && now - hit.at < TRUST_MS) return hit;
    const revision = this.store.revision;
    const stales = this.stales;
    const publish = await this.store.findByAddress(address);
    if (!publish) {
      this.cache.delete(address);
      throw publicNotFound();
    }
    // A change signalled while the store answered may not be in what it answered: kept, but looked up again next time (-1 matches no generation).
    const generation = this.stales === stales ? (this.generations.get(publish.project_id) ?? 0) : -1;
    const found = this.content.findById(publish.node_id);
    const root = found && found.projectId === publish.project_id && found.state === 'active' ? found : null;
    let pinned: VersionInfo | null = null;
    if (root && publish.version !== null) {
      try {
        pinned = this.content.getVersion(root.projectId, { id: root.id }, publish.version);
      } catch {
        pinned = null;
      }
    }
    const entry: Cached = {
      publish,
      expiresAt: publish.expires_at === null ? Infinity : Date.parse(publish.expires_at),
      root: root && (publish.version === null || pinned) ? root : null,
      pinned,
      revision,
      generation,
      at: now,
    };
    this.cache.set(address, entry);
    return entry;
  }
}
