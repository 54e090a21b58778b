import { plainText, type Database, type PropertyValue, type RichText } from './types.ts';

/**
 * A database row's properties as JSON keyed by property name: text as plain text, selects and
 * statuses by option name, people and relations by id, dates as their start (or `{start, end}`),
 * formulas and rollups by their computed value.
 */
export function propertiesToJson(properties: Record<string, PropertyValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(properties)) {
    const v = propertyValue(value);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

type User = { id: string };

function propertyValue(p: PropertyValue | Record<string, unknown>): unknown {
  const type = String(p.type);
  const v = p[type] as unknown;
  switch (type) {
    case 'title':
    case 'rich_text':
      return plainText(v as RichText[]);
    case 'number':
    case 'checkbox':
    case 'url':
    case 'email':
    case 'phone_number':
    case 'created_time':
    case 'last_edited_time':
      return v ?? null;
    case 'select':
    case 'status':
      return (v as { name: string } | null)?.name ?? null;
    case 'multi_select':
      return ((v as { name: string }[] | null) ?? []).map((o) => o.name);
    case 'date':
      return dateValue(v as DateValue | null);
    case 'people':
      return ((v as User[] | null) ?? []).map((u) => u.id);
    case 'relation':
      return ((v as User[] | null) ?? []).map((r) => r.id);
    case 'created_by':
    case 'last_edited_by':
      return (v as User | null)?.id ?? null;
    case 'files':
      return ((v as { name: string; type: string; file?: { url: string }; external?: { url: string } }[] | null) ?? []).map((f) => ({
        name: f.name,
        url: f.type === 'file' ? f.file?.url ?? null : f.external?.url ?? null,
      }));
    case 'formula': {
      const f = v as { type: string; [k: string]: unknown } | null;
      if (!f) return null;
      return f.type === 'date' ? dateValue(f.date as DateValue | null) : f[f.type] ?? null;
    }
    case 'rollup': {
      const r = v as { type: string; [k: string]: unknown } | null;
      if (!r) return null;
      if (r.type === 'array') return ((r.array as Record<string, unknown>[]) ?? []).map(propertyValue);
      if (r.type === 'date') return dateValue(r.date as DateValue | null);
      return r[r.type] ?? null;
    }
    case 'unique_id': {
      const u = v as { prefix: string | null; number: number | null } | null;
      if (!u || u.number === null) return null;
      return u.prefix ? `${u.prefix}-${u.number}` : u.number;
    }
    case 'verification':
      return (v as { state: string } | null)?.state ?? null;
    default:
      // A button or a type newer than this connector: nothing to show.
      return undefined;
  }
}

interface DateValue {
  start: string;
  end: string | null;
  time_zone?: string | null;
}

function dateValue(d: DateValue | null): unknown {
  if (!d) return null;
  if (!d.end && !d.time_zone) return d.start;
  return { start: d.start, end: d.end ?? null, ...(d.time_zone ? { time_zone: d.time_zone } : {}) };
}

/** Property types Notion computes itself: an edit of one here cannot go back. */
const READ_ONLY = new Set(['formula', 'rollup', 'created_time', 'last_edited_time', 'created_by', 'last_edited_by', 'unique_id', 'verification', 'button', 'files']);

export class PropertyError extends Error {}

/**
 * The `properties` of `PATCH /v1/pages/{id}` for the keys of `next` that differ from
 * `previous`, each typed from the database's schema. Throws PropertyError for a key the schema
 * does not have, a computed property, or a value of the wrong shape.
 */
export function changedProperties(schema: Database['properties'], next: Record<string, unknown>, previous: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of new Set([...Object.keys(next), ...Object.keys(previous)])) {
    if (JSON.stringify(next[name]) === JSON.stringify(previous[name])) continue;
    const prop = schema[name];
    if (!prop) throw new PropertyError(`the database has no property "${name}"`);
    if (READ_ONLY.has(prop.type)) throw new PropertyError(`"${name}" is a ${prop.type} property, computed by Notion: it cannot be changed here`);
    out[name] = { [prop.type]: propertyInput(name, prop.type, name in next ? next[name] : null) };
  }
  return out;
}

function propertyInput(name: string, type: string, v: unknown): unknown {
  const wrong = (shape: string) => new PropertyError(`"${name}" (${type}) must be ${shape}`);
  const nullableString = () => {
    if (v === null || v === '') return null;
    if (typeof v !== 'string') throw wrong('a string or null');
    return v;
  };
  const ids = () => {
    if (v === null) return [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw wrong('a list of ids');
    return v.map((id) => ({ id }));
  };
  switch (type) {
    case 'title':
    case 'rich_text': {
      if (v !== null && typeof v !== 'string') throw wrong('a string');
      const text = v ?? '';
      const parts: { type: 'text'; text: { content: string } }[] = [];
      for (let i = 0; i < text.length; i += 2000) parts.push({ type: 'text', text: { content: text.slice(i, i + 2000) } });
      return parts;
    }
    case 'number':
      if (v !== null && (typeof v !== 'number' || !Number.isFinite(v))) throw wrong('a number or null');
      return v;
    case 'checkbox':
      if (typeof v !== 'boolean') throw wrong('true or false');
      return v;
    case 'url':
    case 'email':
    case 'phone_number':
      return nullableString();
    case 'select':
    case 'status': {
      const option = nullableString();
      return option === null ? null : { name: option };
    }
    case 'multi_select':
      if (v === null) return [];
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw wrong('a list of option names');
      return v.map((n) => ({ name: n }));
    case 'date': {
      if (v === null) return null;
      if (typeof v === 'string') return { start: v };
      const d = v as Partial<DateValue>;
      if (typeof d !== 'object' || typeof d.start !== 'string') throw wrong('a date string, {start, end} or null');
      return { start: d.start, end: d.end ?? null, ...(d.time_zone ? { time_zone: d.time_zone } : {}) };
    }
    case 'people':
    case 'relation':
      return ids();
    default:
      throw new PropertyError(`"${name}" is a ${type} property, which this connector cannot write`);
  }
}
