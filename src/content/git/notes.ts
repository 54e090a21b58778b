import { serializeCommit } from './commitObject.ts';
import { casRef, readRef } from './refs.ts';
import type { Repo, TreeEntryRaw } from './repo.ts';

/** Where the store records how it indexed commits that carry no trailers (pushed with git). */
export const NOTES_REF = 'refs/notes/cns';

const TREE = '40000';
const BLOB = '100644';

/**
 * The notes of `refs/notes/cns`, in git's own notes layout (a commit whose tree holds one blob
 * per annotated commit, fanned out as `ab/cdef...`), so `git log --notes=cns` shows them. Reads
 * are asynchronous; a write is prepared (trees read) before the SQLite transaction it belongs
 * to and done synchronously inside it, so that the note is in git before the index commits.
 */
export class Notes {
  constructor(private readonly repo: Repo) {}

  /** The note text of each of `commits` that has one. */
  async read(commits: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const draft = await this.prepare(commits);
    for (const c of commits) {
      const oid = draft.lookup(c);
      if (oid) out.set(c, (await this.repo.readBlob(oid)).toString('utf8'));
    }
    return out;
  }

  /** A draft whose commit replaces every note (a history of notes of its own, for rewritten history). */
  fresh(): NotesDraft {
    const tip = this.repo.exists() ? readRef(this.repo.gitdir, NOTES_REF) : null;
    return new NotesDraft(this.repo, tip, new Map(), new Map(), true);
  }

  /** Reads what adding notes for `commits` needs: the current notes tree and their fan-out folders. */
  async prepare(commits: string[]): Promise<NotesDraft> {
    const tip = this.repo.exists() ? readRef(this.repo.gitdir, NOTES_REF) : null;
    const root = new Map<string, TreeEntryRaw>();
    const dirs = new Map<string, Map<string, TreeEntryRaw>>();
    if (tip) {
      for (const e of await this.repo.readTree((await this.repo.readCommit(tip)).tree)) root.set(e.name, e);
      for (const d of new Set(commits.map((c) => c.slice(0, 2)))) {
        const e = root.get(d);
        if (e?.mode === TREE) dirs.set(d, new Map((await this.repo.readTree(e.oid)).map((x) => [x.name, x] as const)));
      }
    }
    return new NotesDraft(this.repo, tip, root, dirs);
  }
}

export class NotesDraft {
  private readonly added = new Map<string, string>();

  constructor(
    private readonly repo: Repo,
    private tip: string | null,
    private readonly root: Map<string, TreeEntryRaw>,
    private readonly dirs: Map<string, Map<string, TreeEntryRaw>>,
    private orphan = false,
  ) {}

  /** Blob id of the note of `commit` (flat or fanned out), if any. */
  lookup(commit: string): string | undefined {
    const flat = this.root.get(commit);
    if (flat && flat.mode !== TREE) return flat.oid;
    return this.dirs.get(commit.slice(0, 2))?.get(commit.slice(2))?.oid;
  }

  add(commit: string, text: string): void {
    this.added.set(commit, text);
  }

  get size(): number {
    return this.added.size;
  }

  /**
   * Writes the added notes as a new notes commit and moves the ref (git's lock protocol).
   * Synchronous; throws when the ref moved meanwhile (the caller's transaction then rolls back).
   */
  commit(message = 'cns: index notes'): void {
    if (this.added.size === 0 && !this.orphan) return;
    const write = (type: 'blob' | 'tree' | 'commit', content: Buffer) => this.repo.writeObject(type, content);
    const touched = new Set<string>();
    for (const [commit, text] of this.added) {
      const d = commit.slice(0, 2);
      let dir = this.dirs.get(d);
      if (!dir) this.dirs.set(d, (dir = new Map()));
      this.root.delete(commit);
      dir.set(commit.slice(2), { mode: BLOB, name: commit.slice(2), oid: write('blob', Buffer.from(text, 'utf8')) });
      touched.add(d);
    }
    for (const d of touched) this.root.set(d, { mode: TREE, name: d, oid: write('tree', serializeTree([...this.dirs.get(d)!.values()])) });
    const tree = write('tree', serializeTree([...this.root.values()]));
    const seconds = Math.floor(Date.now() / 1000);
    const commitId = write(
      'commit',
      serializeCommit({ tree, parents: this.tip && !this.orphan ? [this.tip] : [], authorName: 'cns', authorEmail: 'cns@cns.invalid', time: seconds, message: message + '\n' }),
    );
    const cas = casRef(this.repo.gitdir, NOTES_REF, this.tip, commitId, this.repo.durable);
    if (cas !== 'ok') throw new Error(`${NOTES_REF} is ${cas === 'locked' ? 'locked by another process' : 'moved by another process'}`);
    this.repo.syncObjectDirs();
    this.tip = commitId;
    this.orphan = false;
    this.added.clear();
  }
}

/** A git tree object; entries sorted as git sorts them (folders compare as `name/`). */
export function serializeTree(entries: TreeEntryRaw[]): Buffer {
  const key = (e: TreeEntryRaw) => (e.mode === TREE ? e.name + '/' : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex')]));
}
