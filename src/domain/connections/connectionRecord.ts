import type { ConnectionsTable } from '../../db/metadata/tables/auth.ts';

/** The unified record behind every access key (spec 4.6): api, agent, mcp, sandbox and sync connections. */
export type ConnectionKind = 'api' | 'agent' | 'mcp' | 'sandbox' | 'sync';
export type ConnectionMode = 'read' | 'read_write';
export type ConnectionStatus = 'active' | 'paused' | 'revoked';

export const connectionKinds: readonly ConnectionKind[] = ['api', 'agent', 'mcp', 'sandbox', 'sync'];
export const connectionModes: readonly ConnectionMode[] = ['read', 'read_write'];
export const connectionStatuses: readonly ConnectionStatus[] = ['active', 'paused', 'revoked'];

/** A connection as stored: its columns are the data-access layer's (db/metadata/tables/auth.ts). */
export type ConnectionRecord = ConnectionsTable;
