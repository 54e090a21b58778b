import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Actor, ContentStore, Mutation } from '../../content/contentStore.ts';
import type { ConvertedNode } from '../converters/converter.ts';
import type { ResultNode } from './taskTypes.ts';

/** A node a task will write, at its project path; a file node's bytes are on disk. */
export type PlannedNode =
  | { path: string; type: 'markdown'; content: string }
  | { path: string; type: 'json'; content: unknown }
  | { path: string; type: 'file'; file: string };

/** A converted node placed at its project path. */
export function plannedAt(n: ConvertedNode, path: string): PlannedNode {
  if (n.type === 'file') return { path, type: 'file', file: n.file };
  if (n.type === 'json') return { path, type: 'json', content: n.content };
  return { path, type: 'markdown', content: n.content };
}

export interface CommitRequest {
  projectId: string;
  actor: Actor;
  /** The target folder, created (with its parents) when missing; '' is the root. */
  folder: string;
  nodes: PlannedNode[];
  message: string;
  /** Awaited in the project's serialized section right before the commit (CommitOptions.check): the last word on whether it may still be written. */
  check: () => Promise<void>;
  /** Lines of the commit's trailer block (CommitOptions.trailers): the task the commit is for. */
  trailers?: string[];
  /** Awaited right before the commit, once the blobs are stored (the task's status as the metadata store has it). */
  beforeCommit?: () => Promise<void>;
  signal: AbortSignal;
}

export interface WrittenNodes {
  nodes: ResultNode[];
  projectVersion: number | null;
}

/**
 * Writes a task's nodes as ONE commit through the content store: text and JSON as content, files
 * streamed into blobs first (a 50 MiB original is never held in memory). An existing node at a
 * path gets a new version (ingesting again updates what the last ingestion wrote); a node whose
 * content is already what was converted keeps its version, and a commit in which nothing changed
 * is not made. Answers each node as it stands after the commit, in the order given.
 */
export async function commitNodes(content: ContentStore, r: CommitRequest): Promise<WrittenNodes> {
  const mutations: Mutation[] = r.folder === '' ? [] : [{ op: 'mkdir', path: r.folder }];
  for (const n of r.nodes) {
    r.signal.throwIfAborted();
    if (n.type === 'file') {
      const { size } = await stat(n.file);
      const blobId = await content.writeBlobStream(r.projectId, createReadStream(n.file), size);
      mutations.push({ op: 'writeBlob', path: n.path, blobId, size });
    } else {
      mutations.push({ op: 'write', path: n.path, type: n.type, content: n.content });
    }
  }
  await r.beforeCommit?.();
  r.signal.throwIfAborted();
  const result = await content.commit(r.projectId, r.actor, mutations, { message: r.message, check: r.check, trailers: r.trailers });
  // Nodes the commit did not change (already as converted) as they stand now.
  const byPath = new Map(result.nodes.map((n) => [n.path, n]));
  const nodes = r.nodes.map((n) => {
    const node = byPath.get(n.path) ?? content.getByPath(r.projectId, n.path);
    return { path: node.path, node_id: node.id, version: node.version, type: n.type };
  });
  return { nodes, projectVersion: result.projectVersion };
}
