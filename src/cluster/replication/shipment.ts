import type { ObjectType } from '../../content/git/objects.ts';

/** A ref of a copy moved by compare-and-swap: from `old` (null: absent) to `next`. */
export interface RefMove {
  name: string;
  old: string | null;
  next: string;
}

export interface ShippedObject {
  type: ObjectType;
  content: Buffer;
}

/**
 * What the primary sends a replica for one acknowledged step of a project (docs/design/cluster.md
 * §5): the refs it moves and the objects the replica lacks to reach them, under the primary's
 * epoch. The replica hashes every object itself, so a shipment cannot smuggle in an object under
 * another id.
 */
export interface Shipment {
  project: string;
  epoch: number;
  refs: RefMove[];
  objects: ShippedObject[];
}

const TYPES: readonly ObjectType[] = ['commit', 'tree', 'blob', 'tag'];
const OID = /^[0-9a-f]{40}$/;
const REF = /^refs\/(?:heads\/main|notes\/cns)$/;
const PROJECT = /^[A-Za-z0-9_-]{1,128}$/;

/** The bytes on the wire: a 4-byte length, a JSON header naming each object's type and size, then the contents in order. */
export function encodeShipment(s: Shipment): Buffer {
  const header = Buffer.from(JSON.stringify({ project: s.project, epoch: s.epoch, refs: s.refs, objects: s.objects.map((o) => [o.type, o.content.length]) }));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length);
  return Buffer.concat([length, header, ...s.objects.map((o) => o.content)]);
}

export class BadShipment extends Error {}

/** Parses and checks a shipment; throws BadShipment for anything malformed. */
export function decodeShipment(body: Buffer): Shipment {
  if (body.length < 4) throw new BadShipment('the shipment is truncated');
  const length = body.readUInt32BE(0);
  if (4 + length > body.length) throw new BadShipment('the shipment header is truncated');
  let h: unknown;
  try {
    h = JSON.parse(body.subarray(4, 4 + length).toString('utf8'));
  } catch {
    throw new BadShipment('the shipment header is not JSON');
  }
  const { project, epoch, refs, objects } = (h ?? {}) as Record<string, unknown>;
  if (typeof project !== 'string' || !PROJECT.test(project)) throw new BadShipment('bad project');
  if (!Number.isSafeInteger(epoch) || (epoch as number) < 1) throw new BadShipment('bad epoch');
  if (!Array.isArray(refs) || refs.length === 0 || refs.length > 2) throw new BadShipment('bad refs');
  for (const r of refs as RefMove[]) {
    if (!r || typeof r.name !== 'string' || !REF.test(r.name) || !OID.test(String(r.next)) || (r.old !== null && !OID.test(String(r.old)))) throw new BadShipment('bad ref move');
  }
  if (!Array.isArray(objects)) throw new BadShipment('bad objects');
  let at = 4 + length;
  const out: ShippedObject[] = [];
  for (const o of objects as unknown[]) {
    const [type, size] = Array.isArray(o) ? o : [];
    if (!TYPES.includes(type as ObjectType) || !Number.isSafeInteger(size) || (size as number) < 0 || at + (size as number) > body.length) throw new BadShipment('bad object entry');
    out.push({ type: type as ObjectType, content: body.subarray(at, at + (size as number)) });
    at += size as number;
  }
  if (at !== body.length) throw new BadShipment('trailing bytes after the objects');
  return { project, epoch: epoch as number, refs: (refs as RefMove[]).map((r) => ({ name: r.name, old: r.old, next: r.next })), objects: out };
}
