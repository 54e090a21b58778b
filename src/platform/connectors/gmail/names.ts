import type { KnownItems } from '../../runtime/connector.ts';
import { sanitizeName } from '../notion/names.ts';

/** Reply and forward prefixes mail clients put before a thread's subject (English and the common European ones). */
const PREFIXES = /^\s*(?:(?:re|fwd?|aw|wg|sv|vs|tr|antw)\s*(?:\[\d+\])?\s*:\s*)+/i;

/** The subject a thread is known by: the message's, without its Re:/Fwd: prefixes. */
export const threadSubject = (subject: string): string => subject.replace(PREFIXES, '').trim();

/** `YYYY-MM-DD <subject>`: the name of a message's node (without extension), by the day Gmail received it (UTC). */
export function messageStem(internalDate: string, subject: string): string {
  const day = new Date(Number(internalDate)).toISOString().slice(0, 10);
  return `${day} ${subject.trim() === '' ? '(no subject)' : sanitizeName(subject)}`;
}

/**
 * The folder of each thread, named after its subject (or its id when it has none). A thread keeps
 * the folder it got first, so its later replies land beside the earlier messages; two threads
 * with one subject get separate folders, the later one with its id added.
 */
export class ThreadFolders {
  private readonly byThread = new Map<string, string>();
  /** Folder name, lowercased (a client's file system may ignore case) → thread. */
  private readonly owners = new Map<string, string>();

  constructor(known: KnownItems) {
    for (const k of known.all()) {
      const { thread, folder } = k.meta;
      if (k.meta.kind === 'message' && typeof thread === 'string' && typeof folder === 'string') this.claim(thread, folder);
    }
  }

  folder(threadId: string, subject: string): string {
    const existing = this.byThread.get(threadId);
    if (existing !== undefined) return existing;
    const stripped = threadSubject(subject);
    const base = stripped === '' ? threadId : sanitizeName(stripped);
    const owner = this.owners.get(base.toLowerCase());
    const name = owner === undefined || owner === threadId ? base : `${base} (${threadId})`;
    this.claim(threadId, name);
    return name;
  }

  private claim(threadId: string, folder: string): void {
    if (!this.byThread.has(threadId)) this.byThread.set(threadId, folder);
    if (!this.owners.has(folder.toLowerCase())) this.owners.set(folder.toLowerCase(), threadId);
  }
}
