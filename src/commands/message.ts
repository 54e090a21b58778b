/**
 * The message a change is recorded with: the caller's own words; else, for a change made
 * through an endpoint (`via`, e.g. `via MCP endpoint "docs"`), what it did and through what;
 * else none, and the content store describes the mutation itself.
 */
export interface ChangeNote {
  message?: string;
  via?: string;
}

export function messageOf(note: ChangeNote, what: string): string | undefined {
  return note.message ?? (note.via === undefined ? undefined : `${what} (${note.via})`);
}
