import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { usageError } from '../client/errors.ts';

interface Tool {
  id: string;
  name: string;
  type: string;
}

interface SearchAnswer {
  query: string;
  mode: string;
  warning?: string;
  results: { node_id: string; path: string; type: string; version: number; chunk_index: number; score: number; snippet: string; heading_path: string }[];
}

type SearchFlags = ClientFlags & { tool?: string; topK?: string; mode?: string; prefix?: string };

async function search(io: CliIo, query: string, flags: SearchFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    if (!query.trim()) throw usageError('the query is empty');
    let toolId = flags.tool;
    if (!toolId) {
      // The project's first search tool.
      const project = await ctx.project();
      const { data } = await ctx.api.get<{ tools: Tool[] }>(`/tools/by-project/${encodeURIComponent(project.id)}`);
      const found = data.tools.find((t) => t.type === 'search');
      if (!found) throw usageError(`project ${project.name} has no search tool: create one with POST /api/v1/tools/search, or pass --tool ID`);
      toolId = found.id;
    }
    const body: Record<string, unknown> = { query };
    if (flags.topK !== undefined) body.top_k = Number(flags.topK);
    if (flags.mode) body.mode = flags.mode;
    if (flags.prefix) body.path_prefix = flags.prefix;
    const { data } = await ctx.api.post<SearchAnswer>(`/tools/${encodeURIComponent(toolId)}/search`, body);
    ctx.out.result(data, () => {
      if (data.warning) ctx.out.line(`(${data.warning})`);
      if (data.results.length === 0) return ctx.out.line('No results');
      for (const r of data.results) {
        ctx.out.line(`${r.path}${r.heading_path ? ` › ${r.heading_path}` : ''}  (score ${r.score.toFixed(4)}, v${r.version})`);
        ctx.out.line(`    ${r.snippet.replace(/\s+/g, ' ').trim()}`);
      }
    });
  });
}

/** `cns search "query" [--tool ID] [--json]`: hybrid search over the project's content. */
export function registerSearchCommand(program: Command, io: CliIo): void {
  clientOptions(
    program
      .command('search')
      .description("search the project's content with a search tool (the project's first one unless --tool)")
      .argument('<query>', 'words to look for'),
  )
    .option('--tool <id>', 'the search tool to use')
    .option('-k, --top-k <n>', 'number of results (1-100, default 10)')
    .option('--mode <mode>', 'hybrid, lexical or vector')
    .option('--prefix <path>', "only beneath this path (relative to the tool's node)")
    .action(withIo(io, search));
}
