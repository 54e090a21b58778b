import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { CNS_DIR } from './folderState.ts';

/** Suffix of files being written by `cns sync` itself (renamed into place when complete). */
export const PARTIAL_SUFFIX = '.cns-partial';

/**
 * Which folder paths the sync leaves alone: its own `.cns/`, `.git/`, its partial writes, and
 * the patterns of `.cnsignore` at the folder root (gitignore syntax). Paths are relative and
 * `/`-separated; a directory is asked about with a trailing `/`.
 */
export class IgnoreRules {
  private readonly rules: Ignore;

  constructor(root: string) {
    this.rules = ignore().add([`/${CNS_DIR}/`, '.git/', `*${PARTIAL_SUFFIX}`]);
    try {
      this.rules.add(readFileSync(join(root, '.cnsignore'), 'utf8'));
    } catch {
      /* no .cnsignore */
    }
  }

  ignores(relPath: string, isDir = false): boolean {
    if (relPath === '') return false;
    return this.rules.ignores(isDir ? `${relPath}/` : relPath);
  }
}
