/** Serializing and parsing git commit objects (the small subset this store needs). */

export interface CommitData {
  tree: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  /** Seconds since the epoch. */
  time: number;
  message: string;
}

/** Git forbids <, > and newlines in identities; keep the rest as given. */
function clean(s: string): string {
  return s.replace(/[<>\n\r\0]/g, '').trim() || 'unknown';
}

export function serializeCommit(c: CommitData): Buffer {
  const ident = `${clean(c.authorName)} <${clean(c.authorEmail)}> ${c.time} +0000`;
  const lines = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`), `author ${ident}`, `committer ${ident}`];
  return Buffer.from(lines.join('\n') + '\n\n' + c.message, 'utf8');
}

export function parseCommit(raw: Buffer): CommitData {
  const text = raw.toString('utf8');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree = '';
  const parents: string[] = [];
  let authorName = 'unknown';
  let authorEmail = '';
  let time = 0;
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
    else if (line.startsWith('author ')) {
      const m = /^author (.*) <([^>]*)> (\d+) [+-]\d{4}$/.exec(line);
      if (m) {
        authorName = m[1];
        authorEmail = m[2];
        time = Number(m[3]);
      }
    }
  }
  return { tree, parents, authorName, authorEmail, time, message };
}
