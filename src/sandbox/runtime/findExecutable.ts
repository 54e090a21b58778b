import { access } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';

/** Absolute path of an executable on the service's PATH (plus the sbin folders), or null. */
export async function findExecutable(name: string): Promise<string | null> {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
  for (const dir of dirs) {
    if (!dir.startsWith('/')) continue;
    const path = join(dir, name);
    try {
      await access(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return null;
}
