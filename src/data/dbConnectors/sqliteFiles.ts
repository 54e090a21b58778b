import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { dbInvalid } from './errors.ts';

/**
 * The SQLite file a connection names, inside the operator's folder (CNS_DB_SQLITE_DIR) and
 * nowhere else: a relative path without `..`, whose real path (symbolic links followed) still
 * lies inside the folder's real path and is a regular file. Checked when the connection is
 * created and again at every session, so a link swapped in later is refused too.
 */
export function sqliteFileIn(dir: string | undefined, file: string | null | undefined): string {
  if (!dir) throw dbInvalid('engine', 'SQLite connections are turned off: the operator has not set CNS_DB_SQLITE_DIR (the folder SQLite files are read from).');
  if (!file) throw dbInvalid('file', 'An SQLite connection needs `file`: a path inside the SQLite folder (CNS_DB_SQLITE_DIR).');
  if (file.includes('\0')) throw dbInvalid('file', 'The file name contains a NUL character.');
  if (isAbsolute(file) || /^[A-Za-z]:|^\\/.test(file)) throw dbInvalid('file', 'The file must be a path relative to the SQLite folder (CNS_DB_SQLITE_DIR), not an absolute path.');
  if (file.split(/[\\/]/).includes('..')) throw dbInvalid('file', 'The file may not contain `..`: only files inside the SQLite folder (CNS_DB_SQLITE_DIR) can be read.');
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    throw dbInvalid('engine', 'The SQLite folder (CNS_DB_SQLITE_DIR) does not exist on the server.');
  }
  let real: string;
  try {
    real = realpathSync(join(root, file));
  } catch {
    throw dbInvalid('file', `No file "${file}" in the SQLite folder (CNS_DB_SQLITE_DIR).`);
  }
  if (!real.startsWith(root.endsWith(sep) ? root : root + sep)) throw dbInvalid('file', `"${file}" leads outside the SQLite folder (a symbolic link out of CNS_DB_SQLITE_DIR): refused.`);
  if (!statSync(real).isFile()) throw dbInvalid('file', `"${file}" is not a file.`);
  return real;
}
