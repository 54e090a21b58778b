/**
 * Whether `err` is a unique index refusing a value of `column`, on either engine: SQLite's
 * SQLITE_CONSTRAINT_UNIQUE names `table.column` in its message; PostgreSQL's 23505 names the key
 * in its detail ("Key (slug)=(…) already exists."). The stores turn it into their own 409.
 */
export function isUniqueViolation(err: unknown, column: string): boolean {
  const e = err as { code?: string; message?: string; detail?: string };
  if (e?.code === 'SQLITE_CONSTRAINT_UNIQUE') return String(e.message).includes(`.${column}`);
  if (e?.code === '23505') return String(e.detail).includes(`(${column})`) || String(e.detail).includes(`, ${column})`);
  return false;
}
