import { MAIN_REF, readRef, casRef } from '../../content/git/refs.ts';
import { NOTES_REF } from '../../content/git/notes.ts';
import { spawnGit } from '../../content/git/gitCli.ts';
import type { Repo } from '../../content/git/repo.ts';
import type { Tips } from './replicator.ts';

const INCOMING = 'refs/cns/incoming/main';
const INCOMING_NOTES = 'refs/cns/incoming/notes';

/** Where a copy fetches from: the primary's repository (a URL between nodes, a folder in tests) and the headers that let it in. */
export interface FetchSource {
  url: string;
  headers?: Record<string, string>;
}

/**
 * Brings a copy to the primary's tips with git's own transfer (`git fetch`, which negotiates what
 * is missing), for what a shipment cannot carry: a copy that is behind or diverged, a merge, a
 * rewritten history, a very large step. `main` fast-forwards when it can; otherwise the copy's own
 * tail (commits a deposed primary never got acknowledged) is kept under `refs/cns/lost/` and `main`
 * takes the primary's. The notes always take the primary's. Runs inside ContentStore.follow.
 */
export async function catchUp(repo: Repo, gitBinary: string | null, source: FetchSource): Promise<Tips> {
  if (!gitBinary) throw new Error('catching up a copy needs the system git');
  repo.ensure();
  const env = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  const config = Object.entries(source.headers ?? {}).flatMap(([k, v]) => ['-c', `http.extraHeader=${k}: ${v}`]);
  await spawnGit(gitBinary, repo.gitdir, [...config, 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', source.url, `+${MAIN_REF}:${INCOMING}`, `+${NOTES_REF}:${INCOMING_NOTES}`], { env, okCodes: [] }).catch(async (err: unknown) => {
    // A primary without notes yet: fetch main alone.
    if (!String(err).includes(NOTES_REF)) throw err;
    await spawnGit(gitBinary, repo.gitdir, [...config, 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', source.url, `+${MAIN_REF}:${INCOMING}`], { env });
  });
  repo.dropCache(); // git wrote packs this process has not seen
  const incoming = readRef(repo.gitdir, INCOMING);
  const mine = readRef(repo.gitdir, MAIN_REF);
  if (incoming && incoming !== mine) {
    const ahead = mine === null || (await spawnGit(gitBinary, repo.gitdir, ['merge-base', '--is-ancestor', mine, incoming], { env, okCodes: [1] })).code === 0;
    if (!ahead) await spawnGit(gitBinary, repo.gitdir, ['update-ref', `refs/cns/lost/${Date.now()}-${mine!.slice(0, 12)}`, mine!], { env });
    if (casRef(repo.gitdir, MAIN_REF, mine, incoming, repo.durable) !== 'ok') throw new Error('main moved while the copy caught up');
  }
  const notes = readRef(repo.gitdir, INCOMING_NOTES);
  const myNotes = readRef(repo.gitdir, NOTES_REF);
  if (notes && notes !== myNotes && casRef(repo.gitdir, NOTES_REF, myNotes, notes, repo.durable) !== 'ok') throw new Error('the notes moved while the copy caught up');
  for (const ref of [INCOMING, INCOMING_NOTES]) if (readRef(repo.gitdir, ref)) await spawnGit(gitBinary, repo.gitdir, ['update-ref', '-d', ref], { env });
  return { [MAIN_REF]: readRef(repo.gitdir, MAIN_REF), [NOTES_REF]: readRef(repo.gitdir, NOTES_REF) };
}
