import { runGit } from './runGit.ts';

export const ZERO_OID = '0'.repeat(40);

export interface PushedCommit {
  oid: string;
  parents: string[];
}

/** One changed path of a commit against its first parent (no rename detection). */
export interface PathChange {
  status: 'A' | 'M' | 'D' | 'T';
  path: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  /** The name is not valid UTF-8 (`path` then holds a lossy rendering for messages). */
  notUtf8?: boolean;
}

export interface CommitChanges {
  commit: string;
  changes: PathChange[];
}

/**
 * Reads what a push brings, through the system git run with the quarantine's object folders
 * (pre-receive runs before the objects are moved into the repository).
 */
export class PushedChanges {
  constructor(
    private readonly gitdir: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Commits reachable from `tip` and not from any existing ref, parents first. */
  async newCommits(tip: string): Promise<PushedCommit[]> {
    const { stdout } = await this.git(['rev-list', '--reverse', '--topo-order', '--parents', tip, '--not', '--all']);
    return stdout
      .toString('latin1')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [oid, ...parents] = line.split(' ');
        return { oid: oid!, parents };
      });
  }

  async isAncestor(older: string, newer: string): Promise<boolean> {
    const { code } = await this.git(['merge-base', '--is-ancestor', older, newer], [1]);
    return code === 0;
  }

  /**
   * Every path each commit adds, changes or removes against its first parent: together they
   * cover every path of every pushed tree (the rest was already in a validated tree).
   */
  async changes(commits: PushedCommit[]): Promise<CommitChanges[]> {
    if (commits.length === 0) return [];
    const input = commits.map((c) => (c.parents.length ? `${c.oid} ${c.parents[0]}` : c.oid)).join('\n') + '\n';
    const { stdout } = await this.git(['diff-tree', '--stdin', '-r', '-z', '--raw', '--no-renames', '--root'], [], input);
    const out: CommitChanges[] = [];
    const tokens = splitNul(stdout);
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!.toString('latin1');
      if (t === '') continue;
      if (t.startsWith(':')) {
        const [oldMode, newMode, oldOid, newOid, status] = t.slice(1).split(' ');
        const change: PathChange = { status: status as PathChange['status'], path: '', oldMode: oldMode!, newMode: newMode!, oldOid: oldOid!, newOid: newOid! };
        const raw = tokens[++i]!;
        try {
          change.path = strictUtf8.decode(raw);
        } catch {
          change.path = raw.toString('utf8');
          change.notUtf8 = true;
        }
        out.at(-1)!.changes.push(change);
      } else {
        out.push({ commit: t.trim(), changes: [] });
      }
    }
    return out;
  }

  /** The message of each commit (everything after the header), by commit id. */
  async messages(commits: PushedCommit[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (commits.length === 0) return out;
    const { stdout } = await this.git(['cat-file', '--batch'], [], commits.map((c) => c.oid).join('\n') + '\n');
    let i = 0;
    while (i < stdout.length) {
      const nl = stdout.indexOf(0x0a, i);
      if (nl < 0) break;
      const [oid, type, size] = stdout.toString('latin1', i, nl).split(' ');
      i = nl + 1;
      if (!size || !/^\d+$/.test(size)) continue;
      const raw = stdout.subarray(i, i + Number(size));
      i += Number(size) + 1;
      if (type !== 'commit') continue;
      const split = raw.indexOf('\n\n');
      out.set(oid!, split < 0 ? '' : raw.toString('utf8', split + 2));
    }
    return out;
  }

  /** Sizes in bytes of the given blobs. */
  async sizes(oids: string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    if (oids.length === 0) return sizes;
    const { stdout } = await this.git(['cat-file', '--batch-check=%(objectname) %(objectsize)'], [], oids.join('\n') + '\n');
    for (const line of stdout.toString('latin1').split('\n')) {
      const [oid, size] = line.split(' ');
      if (oid && size && /^\d+$/.test(size)) sizes.set(oid, Number(size));
    }
    return sizes;
  }

  private git(args: string[], okCodes: number[] = [], input?: string) {
    return runGit(args, { gitdir: this.gitdir, env: this.env, okCodes, input });
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function splitNul(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = buf.indexOf(0, start); i >= 0; i = buf.indexOf(0, start)) {
    parts.push(buf.subarray(start, i));
    start = i + 1;
  }
  if (start < buf.length) parts.push(buf.subarray(start));
  return parts;
}
