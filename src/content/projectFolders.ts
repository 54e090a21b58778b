import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** The data folder's entries, or none when it cannot be read (not created yet). */
function entries(dataDir: string): string[] {
  try {
    return readdirSync(dataDir);
  } catch {
    return [];
  }
}

/** Project ids that have a repository (`<id>.git`) in the data folder. */
export function projectIds(dataDir: string): string[] {
  return entries(dataDir)
    .filter((n) => n.endsWith('.git') && !n.startsWith('.'))
    .map((n) => n.slice(0, -4))
    .sort();
}

/** Removes leftovers of deletions whose folder could not be removed at the time (see ProjectWriter.destroy). */
export async function sweepDeleted(dataDir: string): Promise<void> {
  for (const n of entries(dataDir)) {
    if (!n.startsWith('.deleted-')) continue;
    await rm(join(dataDir, n), { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
  }
}
