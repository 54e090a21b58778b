import { usageError } from './errors.ts';

/** People write `/notes/a.md` or `notes/a.md/`; the API wants `notes/a.md` (the root is ''). */
export function remotePath(input: string | undefined): string {
  return (input ?? '').trim().replace(/^\/+/, '').replace(/\/+$/, '');
}

export function requiredRemotePath(input: string | undefined, what = 'PATH'): string {
  const p = remotePath(input);
  if (p === '') throw usageError(`${what} must name something inside the project, not its root`);
  return p;
}

/** A non-negative integer argument (versions, depths, limits). */
export function intArgument(value: string, name: string, min = 0): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) throw usageError(`${name} must be a whole number ≥ ${min} (got "${value}")`);
  return n;
}
