import { Agent, request } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { ApplyOutcome } from '../replication/applyShipment.ts';
import { DeposedError, type ReplicaClient, type Tips } from '../replication/replicator.ts';
import { encodeShipment, type Shipment } from '../replication/shipment.ts';
import { createHash } from 'node:crypto';
import { signedHeaders } from './nodeSignature.ts';

export const SHIP_PATH = '/internal/v1/replication/ship';
export const CATCH_UP_PATH = '/internal/v1/replication/catch-up';
export const SEAL_PATH = '/internal/v1/replication/seal';
export const PROMOTE_PATH = '/internal/v1/replication/promote';
/** A move's steps (copySteps.ts): on the primary, bring a new copy up to date, or hand the project over; on a leaving copy, remove it. */
export const SYNC_COPY_PATH = '/internal/v1/moves/sync-copy';
export const HANDOFF_PATH = '/internal/v1/moves/hand-off';
export const DROP_COPY_PATH = '/internal/v1/moves/drop-copy';
export const INDEXED_PATH = '/internal/v1/moves/indexed';

/** What an internal call's signature covers: its address and its body (a captured call cannot be replayed with another body). */
export const signedCall = (path: string, body: Buffer) => `${path}\n${createHash('sha256').update(body).digest('base64url')}`;

/** Calls between nodes time out: a node that does not answer is treated as away. */
const CALL_TIMEOUT_MS = 10_000;
/** A catch-up is a git fetch, of a whole large project for a new copy: it may take minutes (a write's quorum has its own timer). */
const CATCH_UP_TIMEOUT_MS = 10 * 60_000;

const agents = { http: new Agent({ keepAlive: true, maxSockets: 16 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 16 }) };

/** One signed internal call to another node; the JSON answer, or throws when the node cannot be reached or answers an error. */
export async function callNode(o: { key: Buffer; me: string; url: string; path: string; body: Buffer; type: string; timeoutMs?: number }): Promise<{ status: number; json: unknown }> {
  const target = new URL(o.path, o.url);
  const secure = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : request)(
      target,
      { method: 'POST', agent: secure ? agents.https : agents.http, headers: { 'content-type': o.type, 'content-length': String(o.body.length), ...signedHeaders(o.key, o.me, 'POST', signedCall(o.path, o.body)) }, timeout: o.timeoutMs ?? CALL_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let json: unknown = null;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            /* not JSON: the status says enough */
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${o.url} did not answer within ${o.timeoutMs ?? CALL_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The primary's client of its replicas over HTTP (src/cluster/nodes/internalApi.ts answers). */
export class ReplicaHttpClient implements ReplicaClient {
  constructor(private readonly o: { key: Buffer; me: string; urlOf: (node: string) => string | null }) {}

  async ship(node: string, shipment: Shipment): Promise<ApplyOutcome> {
    const res = await this.call(node, SHIP_PATH, encodeShipment(shipment), 'application/x-cns-shipment');
    if (res.status !== 200) throw new Error(`${node} answered ${res.status} to a shipment`);
    return (res.json as { data: ApplyOutcome }).data;
  }

  async catchUp(node: string, project: string, epoch: number): Promise<Tips> {
    const res = await this.call(node, CATCH_UP_PATH, Buffer.from(JSON.stringify({ project, epoch })), 'application/json', CATCH_UP_TIMEOUT_MS);
    const body = res.json as { data?: { tips?: Tips; stale_epoch?: number } } | null;
    if (res.status === 409 && body?.data?.stale_epoch !== undefined) throw new DeposedError(project, body.data.stale_epoch);
    if (res.status !== 200 || !body?.data?.tips) throw new Error(`${node} answered ${res.status} to a catch-up`);
    return body.data.tips;
  }

  private call(node: string, path: string, body: Buffer, type: string, timeoutMs?: number) {
    const url = this.o.urlOf(node);
    if (!url) throw new Error(`node ${node} is not known`);
    return callNode({ key: this.o.key, me: this.o.me, url, path, body, type, timeoutMs });
  }
}
