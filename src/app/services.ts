import { join } from 'node:path';
import { AccessTokens } from '../auth/accessTokens.ts';
import { anonKeyOf } from '../auth/anonKey.ts';
import { Authenticator } from '../auth/authenticator.ts';
import { CsrfTokens } from '../auth/csrfTokens.ts';
import { RefreshTokens } from '../auth/refreshTokens.ts';
import { loadOrCreateSigningSecret } from '../auth/signingSecret.ts';
import type { Settings } from '../config/settings.ts';
import { ContentStore } from '../content/contentStore.ts';
import { Checkpointer } from '../db/checkpointer.ts';
import { openDatabase, type Db } from '../db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../db/metadata/metadataStore.ts';
import { openPostgresMetadataOf } from '../db/metadata/openMetadata.ts';
import { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import { InvitationStore } from '../domain/invitations/invitationStore.ts';
import { OrganizationStore } from '../domain/organizations/organizationStore.ts';
import { OrgMembers } from '../domain/organizations/orgMembers.ts';
import { ProjectMembers } from '../domain/projects/projectMembers.ts';
import { ProjectStore } from '../domain/projects/projectStore.ts';
import { UserInitializer } from '../domain/users/userInitialization.ts';
import { UserStore } from '../domain/users/userStore.ts';
import { RateLimiter } from '../http/rateLimiter.ts';
import type { Logger } from '../logging/logger.ts';
import { Authorizer } from '../policies/authorize.ts';
import { ContentAccess } from '../policies/contentAccess.ts';
import { WriteTimeGrants } from '../policies/writeTimeGrant.ts';
import { ChangeBus } from '../events/changeBus.ts';
import { ChangeFeed } from '../events/changeFeed.ts';
import { commitEventOf } from '../events/commitEvent.ts';
import { Changelog } from '../events/changelog.ts';
import { SyncService } from '../platform/syncService.ts';
import { WebhookDeliveries } from '../platform/runtime/webhookDeliveries.ts';
import { UrlSyncs } from '../platform/url/urlSync.ts';
import { connectorFor } from '../platform/connectors/spec.ts';
import { FolderSyncService } from '../sync/folderSync.ts';
import { SyncStore } from '../sync/syncStore.ts';
import { createSandbox, type SandboxService } from '../sandbox/service.ts';
import { narrowAtWrite, reachesNow } from '../agents/tools/reachNow.ts';
import { createTools, type ToolsService } from '../tools/service.ts';
import { createMcp, type McpService } from '../mcp/service.ts';
import { createMcpProxy, type McpProxyService } from '../mcp/proxy/service.ts';
import { createAgents, type AgentsService } from '../agents/service.ts';
import { TableStore } from '../data/tables/tableStore.ts';
import { Tables } from '../data/tables/tables.ts';
import { createDbConnectors } from '../data/dbConnectors/service.ts';
import type { DbConnectors } from '../data/dbConnectors/connectors.ts';
import { createIngest, type IngestService } from '../ingest/service.ts';
import { createPublishing, type PublishingService } from '../publish/service.ts';
import { createAnalytics, type AnalyticsService } from '../analytics/service.ts';
import { createOAuth, type OAuth } from '../platform/oauth/service.ts';
import { SyncRuntime } from '../platform/runtime/syncRuntime.ts';
import { platformConnectors } from '../platform/connectors/index.ts';
import { SecretBox } from '../auth/secretBox.ts';
import { serviceVersion } from '../config/version.ts';
import { createWebhooks, type WebhooksService } from '../webhooks/service.ts';
import { aloneOwnership, type Ownership } from '../cluster/ownership.ts';
import type { ClusterHooks } from '../http/workers/ownerRouting.ts';
import { ClusterMembership } from '../cluster/membership.ts';
import { ClusterNode } from '../cluster/nodes/clusterNode.ts';
import { nodeOwnership } from '../cluster/nodes/nodeOwnership.ts';
import { nodeRouting } from '../http/nodes/nodeRouting.ts';
import { openNatsBus } from '../events/natsBus.ts';

/** Everything a request handler may need, built once per process and passed down explicitly. */
export interface Services {
  settings: Settings;
  logger: Logger;
  /** Which projects this process writes and which background duties it runs (src/cluster/). */
  ownership: Ownership;
  /** Several workers: the routing middleware and the owner gate a worker adds to the app (src/cluster/). */
  cluster?: ClusterHooks;
  /**
   * A node of a cluster (CNS_BUS_URL): its membership in PostgreSQL. Every process reads the
   * nodes through it; the one with the box's duties joins and beats (joinCluster). Null otherwise.
   */
  membership: ClusterMembership | null;
  /** A node of a cluster: placement, replication and failover (src/cluster/nodes/). Null otherwise. */
  node: ClusterNode | null;
  /** The service database's connection: the content index, and the stores not yet on `metadata`. */
  db: Db;
  /** The metadata store: records git cannot rebuild, async, on SQLite in the data folder or PostgreSQL (CNS_DATABASE_URL). */
  metadata: MetadataStore;
  /** Runs SQLite's WAL checkpoints on a worker thread, never inside a request's commit. */
  checkpointer: Checkpointer;
  signingSecret: Uint8Array;
  users: UserStore;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  /** The dashboard's cookie session: the X-CSRF-Token each of its writes must echo. */
  csrfTokens: CsrfTokens;
  authenticator: Authenticator;
  authorizer: Authorizer;
  /** The one content-access policy: what a principal may read and write beneath which path. */
  access: ContentAccess;
  /** The same policy asked again at each write of a background run (syncs, sandboxes, ingestion). */
  writeTimeGrants: WriteTimeGrants;
  rateLimiter: RateLimiter;
  loginRateLimiter: RateLimiter;
  /** Login attempts per client address, whatever the email. */
  loginAddressRateLimiter: RateLimiter;
  /** The content-store core: every content write of every surface goes through it. */
  content: ContentStore;
  organizations: OrganizationStore;
  orgMembers: OrgMembers;
  invitations: InvitationStore;
  projects: ProjectStore;
  projectMembers: ProjectMembers;
  connections: AccessConnectionStore;
  userInitializer: UserInitializer;
  /** Every change of a project after a commit number, read from the content index. */
  changelog: Changelog;
  syncStore: SyncStore;
  syncs: SyncService;
  /** The folder-sync protocol of `cns sync` (pull, push, ack): src/sync/. */
  folderSync: FolderSyncService;
  /** The change bus (src/events/): every acknowledged commit, for the feed, the indexer, caches and later webhooks. */
  bus: ChangeBus;
  /** The live change feed (Server-Sent Events), a subscriber of the change bus. */
  feed: ChangeFeed;
  /** Tools (spec 4.9) and the search indexer that follows every commit. */
  tools: ToolsService;
  /** Sandboxed commands (spec 4.9): the runtime, workspaces and sandbox endpoints. */
  sandbox: SandboxService;
  /** MCP endpoints (spec 4.9): their records and the sessions of their Streamable HTTP servers. */
  mcp: McpService;
  /** The MCP proxy (spec 4.9): external MCP servers registered per project, reached through the outbound guard. */
  mcpProxy: McpProxyService;
  /** Agents (spec 4.8): configuration, accesses, bash tools, chat, sessions, executions and workspaces. */
  agents: AgentsService;
  /** Ingestion (spec 4.10): the durable task queue converting files and web pages into content, and its ETL rules. */
  ingest: IngestService;
  /** Tables (spec 4.5): JSON data addressed by JSON Pointer, each a json node of a project plus a record. */
  tables: Tables;
  /** Database connectors (spec 4.10): PostgreSQL, MySQL/MariaDB and SQLite connections, read-only, saved as content. */
  dbConnectors: DbConnectors;
  /** Publishing (spec 4.10): nodes made public at /p/{publish_key}, and what those addresses serve. */
  publishing: PublishingService;
  /** Usage analytics (spec 4.10): per-minute counts of public views and API calls, written in batches. */
  analytics: AnalyticsService;
  /** OAuth and token connections per project (spec 4.10): the routes' service, and the credentials syncs use. */
  oauth: OAuth;
  /** Runs and schedules platform syncs (github, notion, linear, airtable): src/platform/runtime/. */
  syncRuntime: SyncRuntime;
  /** Outgoing webhooks (issue 33): hooks, their durable deliveries and the dispatcher (started by startWebhooks). */
  webhooks: WebhooksService;
}

/**
 * The services of one process, with the metadata store on PostgreSQL when CNS_DATABASE_URL says
 * so. That store is opened (checked, migrated) first, so a database that is unreachable, refuses
 * the credentials or is newer than this code stops the start before the data folder is touched.
 * `poolMax`: this process's share of CNS_DATABASE_POOL (a worker's is poolPerProcess).
 */
export async function openServices(settings: Settings, logger: Logger, owner: Ownership | ((db: Db) => Ownership) = aloneOwnership, poolMax = settings.databasePool): Promise<Services> {
  const metadata = await openPostgresMetadataOf(settings, poolMax, logger);
  try {
    return createServices(settings, logger, owner, metadata ?? undefined);
  } catch (e) {
    await metadata?.close();
    throw e;
  }
}

/**
 * `owner`: one process owns everything (the default); a worker passes how to build its ownership
 * over the opened database. `given`: a metadata store opened already (PostgreSQL, by
 * openServices); without one it is SQLite, on `cns.db`.
 */
export function createServices(settings: Settings, logger: Logger, owner: Ownership | ((db: Db) => Ownership) = aloneOwnership, given?: MetadataStore): Services {
  const dbFile = join(settings.dataDir, 'cns.db');
  const db = openDatabase(dbFile, { fsync: settings.fsync });
  // The records git cannot rebuild, through the async data-access layer (moving store by store: docs/design/postgres.md).
  const metadata = given ?? openSqliteMetadata(dbFile, { fsync: settings.fsync });
  const signingSecret = loadOrCreateSigningSecret(settings.dataDir);
  // A node of a cluster (issue 31): its membership, placement and replication, over PostgreSQL.
  if (settings.cluster && metadata.engine !== 'postgres') throw new Error('a cluster keeps its metadata and placement in PostgreSQL: set CNS_DATABASE_URL');
  const membership = settings.cluster ? new ClusterMembership({ db: metadata.db, settings: settings.cluster, signingSecret, version: serviceVersion, logger }) : null;
  const node = settings.cluster && membership ? new ClusterNode({ settings: settings.cluster, db: metadata.db, membership, signingSecret, logger, replicationTimeoutMs: settings.cluster.replicationTimeoutMs }) : null;
  const ownership = node ? nodeOwnership(node) : typeof owner === 'function' ? owner(db) : owner;
  // The cluster node this process is: its start-up recovery touches only its own runs and tasks; null is a single box.
  const nodeId: string | null = settings.cluster?.nodeId ?? null;
  // One checkpointer per box (several workers: on the worker with the box's duties).
  const checkpointer = new Checkpointer(db, dbFile, { fsync: settings.fsync, logger, thread: ownership.boxDuties });
  const users = new UserStore(metadata, { passwordHashCost: settings.passwordHashCost });
  const accessTokens = new AccessTokens(signingSecret, settings.accessTokenTtlSeconds);
  const organizations = new OrganizationStore(metadata);
  const content = new ContentStore({
    dataDir: settings.dataDir,
    db,
    logger,
    fence: ownership.fence ? (projectId) => ownership.fence!(projectId) : undefined,
    soleWriterSince: (projectId) => ownership.soleWriterSince(projectId),
    ...(node && { replicate: node.replicate, mayWrite: node.mayWrite }),
    fsync: settings.fsync,
    maxContentBytes: settings.maxContentBytes,
    repackEvery: settings.repackEvery,
    blameCheckpointEvery: settings.blameCheckpointEvery,
  });
  // A project's repository and index live in the content store: creating and deleting go through it.
  const projects = new ProjectStore(metadata, node ? node.repositoriesOver(content) : content);
  const orgMembers = new OrgMembers(metadata);
  const projectMembers = new ProjectMembers(metadata);
  const authorizer = new Authorizer({ organizations, orgMembers, projects, projectMembers });
  const connections = new AccessConnectionStore(metadata);
  const changelog = new Changelog(content);
  const syncStore = new SyncStore(metadata);
  const folderSync = new FolderSyncService({ store: syncStore, connections, content, changelog });
  // The change bus: every acknowledged commit of the content core, whatever wrote it.
  const bus = new ChangeBus(logger);
  content.onCommitted((tip) => (tip.followed ? bus.publishHere(commitEventOf(tip)) : bus.publish(commitEventOf(tip))));
  const feed = new ChangeFeed(changelog, {
    maxStreamsPerHolder: settings.maxEventStreams,
    onError: (err, project) => logger.warn({ err, project }, 'the live feed could not fan out a commit'),
  });
  bus.subscribe('live-feed', (e) => feed.notify(e.project));
  bus.subscribe('blame-checkpoints', (e) => content.warmBlame(e.project, e.seq), { local: true });
  // Deleted, reindexed or purged here: every worker drops what it holds of the project (this one did already).
  content.onProjectChanged((change) => bus.signal(change));
  bus.onSignal('content-caches', (s) => content.dropCached(s));
  if (node) {
    // A move changed a project's placement: every node reads it again at its next request.
    node.announceWith((project) => bus.signal({ kind: 'placement-changed', project }));
    bus.onSignal('placement', (s) => {
      if (s.kind === 'placement-changed') node.forget(s.project);
    });
  }
  // Access taken away in any worker (or the project deleted): open streams check theirs at once.
  bus.onSignal('live-feed', (s) => {
    if (s.kind === 'access-changed' || s.kind === 'project-deleted') feed.revalidate();
  });
  const access = new ContentAccess(authorizer);
  const refreshTokens = new RefreshTokens(metadata, settings.refreshTokenTtlSeconds);
  const authenticator = new Authenticator(metadata, users, accessTokens, anonKeyOf(signingSecret), refreshTokens, logger);
  const writeTimeGrants = new WriteTimeGrants({ authenticator, access });
  // A command's write-back asks the policy again; an agent's, through its reach as it stands then.
  const sandbox = createSandbox({ settings, logger, content, bus, connections, access, authorizer, writeTimeGrants, narrowAtWrite: narrowAtWrite(reachesNow({ metadata, content })), worker: ownership });
  const tools = createTools({ settings, logger, metadata, content, bus, changelog, access, authorizer, sandbox: sandbox.executor, ownership });
  const agents = createAgents({ db, metadata, logger, connections, content, access, authorizer, tools: tools.tools, indexer: tools.indexer, sandbox: sandbox.executor, llm: settings.llm, recover: ownership.boxStart, nodeId });
  const mcp = createMcp({ logger, version: serviceVersion, content, connections, access, authorizer, authenticator, tools: tools.tools, changelog, agents: agents.agents, agentTools: agents.bindings });
  const publishing = createPublishing({ metadata, content, access, bus });
  const oauth = createOAuth({ metadata, signingSecret, settings: () => settings, authorizer, users, logger });
  const ingest = createIngest({ settings, logger, metadata, content, access, writeTimeGrants, providers: agents.providers, syncConnector: connectorFor, ownership, nodeId });
  const syncRuntime = new SyncRuntime({
    convert: ingest.convert,
    metadata,
    store: syncStore,
    connections,
    content,
    changelog,
    credentials: oauth.credentials,
    grants: writeTimeGrants,
    logger,
    connectors: platformConnectors,
    settings: () => settings,
    nodeId,
    // Several workers: scheduled runs on the project's owner only; leftovers marked at the box's start only.
    ...(!ownership.alone && { adopt: (projectId: string) => ownership.adopt(projectId), recover: ownership.boxStart }),
  });
  // A connection that is gone or refused pauses the syncs that use it, with the reason.
  oauth.service.onDisconnect((projectId, provider) => void syncRuntime.pauseProvider(projectId, provider, 'disconnected'));
  oauth.service.onNeedsReauth((projectId, provider) => void syncRuntime.pauseProvider(projectId, provider, 'needs_reauth'));
  const webhooks = createWebhooks({ metadata, settings, logger, signingSecret, changelog, bus, authenticator, access, connections, syncStore, ingestQueue: ingest.queue, ownership });
  node?.attach(content);
  const analytics = createAnalytics({ metadata, logger, enabled: settings.analytics, flushMs: settings.analyticsFlushMs, content, access, authorizer, connections, publishes: publishing.publishes });
  return {
    settings,
    logger,
    ownership,
    membership,
    node,
    ...(node && { cluster: nodeRouting(node, { bodyLimitBytes: settings.bodyLimitBytes }) }),
    db,
    metadata,
    checkpointer,
    signingSecret,
    users,
    accessTokens,
    refreshTokens,
    csrfTokens: new CsrfTokens(signingSecret),
    authenticator,
    authorizer,
    access,
    writeTimeGrants,
    rateLimiter: new RateLimiter(settings.rateLimitMax, settings.rateLimitWindowMs),
    loginRateLimiter: new RateLimiter(settings.loginRateLimitMax, settings.loginRateLimitWindowMs),
    loginAddressRateLimiter: new RateLimiter(settings.loginAddressRateLimitMax, settings.loginRateLimitWindowMs),
    content,
    organizations,
    orgMembers,
    invitations: new InvitationStore(metadata),
    projects,
    projectMembers,
    connections,
    userInitializer: new UserInitializer(metadata, users, organizations, projects),
    changelog,
    syncStore,
    syncs: new SyncService({
      store: syncStore,
      connections,
      folders: folderSync,
      urls: new UrlSyncs({ store: syncStore, connections, content, changelog, maxContentBytes: settings.maxContentBytes, allowPrivate: settings.urlFetchAllowPrivate, nodeId }),
      runtime: syncRuntime,
      webhookBox: new SecretBox(signingSecret, 'sync-webhooks'),
      deliveries: new WebhookDeliveries(metadata, () => settings.sync.webhookRemember),
      minIntervalS: () => settings.sync.minIntervalS,
    }),
    folderSync,
    syncRuntime,
    bus,
    feed,
    tools,
    sandbox,
    mcp,
    mcpProxy: createMcpProxy({ metadata, signingSecret, logger, allowPrivate: () => settings.urlFetchAllowPrivate }),
    agents,
    ingest,
    tables: new Tables({ store: new TableStore(metadata), content, access, authorizer, projects }),
    dbConnectors: createDbConnectors({ metadata, signingSecret, access, content, settings: () => settings.dbConnectors }),
    publishing,
    analytics,
    oauth,
    webhooks,
  };
}

/**
 * Starts the webhook dispatcher: queuing from the change bus and sending. Under several workers
 * (issue 29) every worker calls it: each queues its own commits and sends its projects' deliveries.
 */
export function startWebhooks(services: Services): void {
  services.webhooks.start();
}

/**
 * A node of a cluster joins it before serving: once per node, on the process with the box's
 * duties (the only process when alone, w1 under several workers), which then beats until
 * closeServices. Throws ClusterJoinRefused (one line) when the cluster refuses this node.
 * `onLost`: another run took this node's id later on, and the whole node must stop.
 */
export async function joinCluster(services: Services, onLost: (reason: string) => void): Promise<void> {
  if (!services.membership || !services.ownership.boxDuties) return;
  await services.membership.join(onLost);
  if (!services.node || !services.settings.cluster) return;
  await services.node.start();
  // The change bus between nodes: commits and signals of every node reach this one, and the other way.
  await services.bus.connect(await openNatsBus({ servers: services.settings.cluster.busUrls, origin: services.settings.cluster.nodeId, logger: services.logger }));
}

export async function closeServices(services: Services): Promise<void> {
  // Pending usage counts are written while the database is still open.
  await services.analytics.close();
  // Runs going on stop and record themselves (interrupted) while the stores are open.
  await services.syncRuntime.stop();
  // Attempts in flight are recorded; pending deliveries wait in SQLite for the next start.
  await services.webhooks.stop();
  // Before the content store and the database: running tasks are stopped and queued again.
  await services.ingest.close();
  services.mcp.close();
  await services.tools.close();
  await services.sandbox.close();
  await services.bus.close();
  await services.checkpointer.stop();
  await services.content.close();
  await services.node?.close();
  // Last of what uses PostgreSQL: the node stops beating and says it is down (when it joined).
  await services.membership?.leave();
  await services.metadata.close();
  services.db.close();
}
