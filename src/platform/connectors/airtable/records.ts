import { createHash } from 'node:crypto';
import { gitNameProblem } from '../../../content/paths.ts';
import type { KnownItem, SourceItem } from '../../runtime/connector.ts';
import type { AirtableRecord, AirtableTable } from './api.ts';

/**
 * A record's version: the hash of its fields, keys sorted. Listings carry no modification time
 * (without a "last modified" field), and an unchanged hash means the node is not rewritten.
 */
export function fieldsVersion(fields: Record<string, unknown>): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(fields)).digest('hex').slice(0, 32);
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function recordItem(record: AirtableRecord, table: AirtableTable, folder: string): SourceItem {
  return {
    sourceId: record.id,
    path: `${folder}/${record.id}.json`,
    type: 'json',
    content: { id: record.id, createdTime: record.createdTime, fields: record.fields },
    sourceVersion: fieldsVersion(record.fields),
    meta: { tableId: table.id },
  };
}

export function tableIdOf(k: KnownItem): string | null {
  return typeof k.meta.tableId === 'string' ? k.meta.tableId : null;
}

/**
 * The folder of each table: its name made a safe path segment ("/" and control characters
 * replaced, no leading dot). Two tables whose names come out the same get their ids appended.
 */
export function tableFolders(tables: AirtableTable[]): Map<string, string> {
  const folders = new Map<string, string>();
  const taken = new Set<string>();
  for (const t of tables) {
    let folder = safeSegment(t.name) ?? t.id;
    if (taken.has(folder.toLowerCase())) folder = `${folder} ${t.id}`;
    taken.add(folder.toLowerCase());
    folders.set(t.id, folder);
  }
  return folders;
}

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f/\\]/g;

function safeSegment(name: string): string | null {
  let s = name.replace(UNSAFE, '_').trim().replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  while (Buffer.byteLength(s) > 200) s = s.slice(0, -1);
  if (s === '' || s === '.trash' || gitNameProblem(s)) return null;
  return s;
}
