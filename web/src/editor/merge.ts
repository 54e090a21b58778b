import { api } from '../api/client.ts';
import { formatJson } from './jsonText.ts';

/**
 * The three-way merge the conflict dialog offers: the service's own merge (`POST /collab/merge`,
 * the merge `POST /collab/commit` would write, answered without writing), so the dashboard shows
 * exactly what the server would merge: Markdown line by line, JSON key by key.
 */
export type Merge =
  | { clean: true; text: string }
  | { clean: false; text: string; conflicts: number; pointers?: string[] };

interface MergeAnswer {
  clean: boolean;
  merged: unknown;
  merged_text: string | null;
  conflicts: { pointer?: string }[];
}

/** `mine` (decoded: a JSON value or Markdown text), written against `baseVersion`, merged with the node as it is now. */
export async function mergeWithServer(projectId: string, node: { id: string; type: 'markdown' | 'json' }, mine: unknown, baseVersion: number): Promise<Merge> {
  const m = await api<MergeAnswer>('POST', '/collab/merge', { project_id: projectId, node_id: node.id, content: mine, base_version: baseVersion });
  if (m.clean) return { clean: true, text: node.type === 'json' ? formatJson(m.merged) : String(m.merged) };
  const pointers = node.type === 'json' ? m.conflicts.map((c) => c.pointer ?? '') : undefined;
  return { clean: false, text: m.merged_text ?? '', conflicts: m.conflicts.length, pointers };
}
