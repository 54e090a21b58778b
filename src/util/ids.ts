import { randomBytes } from 'node:crypto';

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Opaque, URL-safe, sortable-enough ids with a type prefix that makes logs readable (`prj_…`, `usr_…`). */
export function newId(prefix: string, bytes = 12): string {
  const raw = randomBytes(bytes);
  let out = '';
  for (const b of raw) out += alphabet[b % 36];
  return `${prefix}_${out}`;
}

export const nowIso = (): string => new Date().toISOString();
