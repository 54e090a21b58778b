import { z } from 'zod';
import { int } from './settingKinds.ts';

/**
 * A node of a cluster (issue 31, docs/design/cluster.md §1): set by CNS_BUS_URL, and then only
 * with PostgreSQL metadata, a node id and the address other nodes reach this one at.
 */
export interface ClusterSettings {
  /** CNS_BUS_URL: the NATS servers, as given (`nats://host:port`, credentials allowed). */
  busUrls: string[];
  /** CNS_NODE_ID: this node's name in the cluster, `[a-z0-9-]{1,32}`. */
  nodeId: string;
  /** CNS_NODE_URL: where the other nodes reach this one, `http(s)://host[:port]` (no path). */
  nodeUrl: string;
  /** CNS_REPLICAS: copies of each project (the primary included). */
  replicas: number;
  /** CNS_CLUSTER_HEARTBEAT_MS: how often the node beats and the coordinator renews its lease. */
  heartbeatMs: number;
  /** CNS_CLUSTER_DOWN_AFTER_MS: a node without a beat this long is marked down (and the coordinator lease lapses). */
  downAfterMs: number;
  /** CNS_REPLICATION_TIMEOUT_MS: how long a write waits for a quorum of copies before it answers 503. */
  replicationTimeoutMs: number;
  /** CNS_CLUSTER_REPLACE_AFTER_S: a copy on a node down this long is replaced by one on a live node (at the project's next write). */
  replaceAfterMs: number;
}

const DEFAULT_REPLICAS = 3;
const DEFAULT_HEARTBEAT_MS = 1000;
const DEFAULT_DOWN_AFTER_MS = 5000;
const DEFAULT_REPLICATION_TIMEOUT_MS = 5000;
const DEFAULT_REPLACE_AFTER_S = 300;
/** Down-after must leave room for a few missed beats, or a slow beat would mark a live node down. */
const BEATS_BEFORE_DOWN = 3;

/** One NATS server address, or null when it is not `nats://host[:port]`. */
function natsUrl(text: string): string | null {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  if (u.protocol !== 'nats:' || !u.hostname || (u.pathname !== '' && u.pathname !== '/') || u.search || u.hash) return null;
  return text;
}

const busUrls = z
  .string()
  .transform((v, ctx) => {
    const parts = v.split(',').map((p) => p.trim());
    const urls = parts.map(natsUrl);
    if (parts.some((p) => p === '') || urls.some((u) => u === null)) {
      ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of nats://host:port' });
      return z.NEVER;
    }
    return urls as string[];
  });

const nodeUrl = z.string().transform((v, ctx) => {
  let u: URL | null = null;
  try {
    u = new URL(v);
  } catch {
    // refused below
  }
  const bare = u && (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname && !u.username && !u.password && (u.pathname === '/' || u.pathname === '') && !u.search && !u.hash;
  if (!bare) {
    ctx.addIssue({ code: 'custom', message: 'must be http(s)://host[:port] without a path, the address other nodes reach this one at' });
    return z.NEVER;
  }
  return u!.origin;
});

/** The cluster's variables, validated one by one with the other settings (their rules together: clusterSettingsOf). */
export const clusterEnvShape = {
  CNS_BUS_URL: busUrls.optional(),
  CNS_NODE_ID: z.string().regex(/^[a-z0-9-]{1,32}$/, 'must be 1 to 32 characters of a-z, 0-9 and -').optional(),
  CNS_NODE_URL: nodeUrl.optional(),
  CNS_REPLICAS: int(1, 7).optional(),
  CNS_CLUSTER_HEARTBEAT_MS: int(100, 10_000).optional(),
  CNS_CLUSTER_DOWN_AFTER_MS: int(300, 3_600_000).optional(),
  CNS_REPLICATION_TIMEOUT_MS: int(100, 600_000).optional(),
  CNS_CLUSTER_REPLACE_AFTER_S: int(1, 604_800).optional(),
};

type ClusterEnv = { [K in keyof typeof clusterEnvShape]?: z.output<(typeof clusterEnvShape)[K]> };

/**
 * The cluster settings, or null without CNS_BUS_URL. Throws one line per problem, each naming
 * its variable: a setting of a cluster given without CNS_BUS_URL is refused rather than ignored,
 * as it would change what the service does if it were read.
 */
export function clusterSettingsOf(e: ClusterEnv, hasDatabaseUrl: boolean): ClusterSettings | null {
  const problems: string[] = [];
  if (e.CNS_BUS_URL === undefined) {
    for (const name of ['CNS_NODE_ID', 'CNS_NODE_URL', 'CNS_REPLICAS', 'CNS_CLUSTER_HEARTBEAT_MS', 'CNS_CLUSTER_DOWN_AFTER_MS', 'CNS_REPLICATION_TIMEOUT_MS', 'CNS_CLUSTER_REPLACE_AFTER_S'] as const) {
      if (e[name] !== undefined) problems.push(`${name} is set without CNS_BUS_URL: it applies to a node of a cluster only`);
    }
    if (problems.length) throw new Error(problems.join('; '));
    return null;
  }
  if (!hasDatabaseUrl) problems.push('CNS_DATABASE_URL must be set with CNS_BUS_URL: a cluster keeps its metadata and placement in PostgreSQL');
  if (e.CNS_NODE_ID === undefined) problems.push("CNS_NODE_ID must be set with CNS_BUS_URL: this node's name in the cluster, such as node-1");
  if (e.CNS_NODE_URL === undefined) problems.push('CNS_NODE_URL must be set with CNS_BUS_URL: the address other nodes reach this one at, such as http://10.0.0.1:8080');
  const heartbeatMs = e.CNS_CLUSTER_HEARTBEAT_MS ?? DEFAULT_HEARTBEAT_MS;
  const least = BEATS_BEFORE_DOWN * heartbeatMs;
  if (e.CNS_CLUSTER_DOWN_AFTER_MS !== undefined && e.CNS_CLUSTER_DOWN_AFTER_MS < least) {
    problems.push(`CNS_CLUSTER_DOWN_AFTER_MS must be at least ${BEATS_BEFORE_DOWN} × CNS_CLUSTER_HEARTBEAT_MS, ${least} (got "${e.CNS_CLUSTER_DOWN_AFTER_MS}")`);
  }
  if (problems.length) throw new Error(problems.join('; '));
  return {
    busUrls: e.CNS_BUS_URL,
    nodeId: e.CNS_NODE_ID!,
    nodeUrl: e.CNS_NODE_URL!,
    replicas: e.CNS_REPLICAS ?? DEFAULT_REPLICAS,
    heartbeatMs,
    // A heartbeat raised alone raises the default with it.
    downAfterMs: e.CNS_CLUSTER_DOWN_AFTER_MS ?? Math.max(DEFAULT_DOWN_AFTER_MS, least),
    replicationTimeoutMs: e.CNS_REPLICATION_TIMEOUT_MS ?? DEFAULT_REPLICATION_TIMEOUT_MS,
    replaceAfterMs: (e.CNS_CLUSTER_REPLACE_AFTER_S ?? DEFAULT_REPLACE_AFTER_S) * 1000,
  };
}
