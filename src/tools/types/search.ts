import { z } from 'zod';
import { DomainError } from '../../errors/domainError.ts';
import { runSearch } from '../../search/searcher.ts';
import { defineToolType } from '../toolType.ts';
import { pathInScope } from '../../policies/scope.ts';

const mode = z.enum(['lexical', 'vector', 'hybrid']);

export const searchConfig = z
  .object({
    default_top_k: z.number().int().min(1).max(100).optional(),
    default_mode: mode.optional(),
  })
  .strict();

export const searchInput = z
  .object({
    query: z.string().trim().min(1, 'must not be empty').max(2000),
    top_k: z.number().int().min(1).max(100).optional().describe('results to return (default 10, at most 100)'),
    mode: mode.optional().describe('hybrid (default when an embedding provider is configured), lexical or vector'),
    path_prefix: z.string().max(4096).optional().describe("only nodes beneath this path, relative to the tool's node"),
  })
  .strict();

export const searchTool = defineToolType({
  type: 'search',
  summary: "Hybrid (BM25 + vector) search over the tool's subtree, kept fresh after every commit.",
  binds: 'any',
  config: searchConfig,
  input: searchInput,
  async run(call) {
    const g = await call.grant('content:read');
    const { indexer, content } = call.env;
    const index = indexer.queries(g.projectId);
    if (!index) throw new DomainError('CONFLICT', 'The search index of this project is not loaded yet; try again shortly.');
    // The narrowest of: the tool's node, the path prefix asked for, the caller's scope.
    let prefix = call.resolve(g, call.args.path_prefix, { listing: true, field: 'arguments.path_prefix' });
    if (!pathInScope(prefix, g.scope)) {
      if (!pathInScope(g.scope, prefix)) return { query: call.args.query, mode: 'lexical', results: [] };
    } else prefix = g.scope.split('/').filter(Boolean).join('/');
    const topK = call.args.top_k ?? call.config.default_top_k ?? 10;
    const wanted = call.args.mode ?? call.config.default_mode ?? indexer.mode;
    const outcome = await runSearch(index, indexer.embeddings, { query: call.args.query, topK, mode: wanted, prefix }, 10);
    const results = [];
    for (const h of outcome.hits) {
      // The current state wins over an index that has not caught up yet: nothing deleted, moved away or out of reach.
      const node = content.findById(h.nodeId);
      if (!node || node.state !== 'active' || node.projectId !== g.projectId) continue;
      if (!call.inTool(node.path) || !call.env.access.mayPath(g, node.path) || !pathInScope(prefix, node.path)) continue;
      results.push({
        node_id: node.id,
        path: node.path,
        type: node.type,
        version: h.version,
        chunk_index: h.chunkIndex,
        score: Number(h.score.toFixed(6)),
        snippet: h.snippet,
        heading_path: h.headingPath,
      });
      if (results.length >= topK) break;
    }
    return { query: call.args.query, mode: outcome.mode, ...(outcome.warning ? { warning: outcome.warning } : {}), results };
  },
});
