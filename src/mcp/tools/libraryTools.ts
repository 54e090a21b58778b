import { pathInScope } from '../../policies/scope.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';
import { unstoredTool } from '../../tools/unstoredTool.ts';
import { libraryPath, projectOf, viaOf, type CallContext } from '../context.ts';
import { typeInputSchema, withPaths, type McpTool, type ToolHints } from './mcpTool.ts';

/**
 * ls, cat, tree, write and search are the tools library's own types, run through `Tools.call`
 * (the function REST and agents call) as a tool bound to the endpoint's folder: the library
 * checks the arguments against the type's schema and keeps every path inside the folder, the
 * policy checks the caller. Only the paths are translated: MCP tools take project paths.
 */
interface LibrarySpec {
  type: string;
  title: string;
  description: string;
  annotations: ToolHints;
  writes?: boolean;
  /** Path arguments and what they name. */
  paths: Record<string, string>;
  /** The tool's config (default `{}`). */
  config?: (c: CallContext) => Promise<Record<string, unknown>>;
}

/** The endpoint's folder as the library's tool record. */
function asToolRecord(c: CallContext, type: string, config: Record<string, unknown>): ToolRecord {
  const { connection } = c.endpoint;
  return unstoredTool({ id: `${connection.id}:${type}`, projectId: connection.project_id, nodeId: c.endpoint.nodeId, type, config, at: connection.updated_at });
}

function libraryTool(spec: LibrarySpec): McpTool {
  return {
    name: spec.type,
    title: spec.title,
    description: spec.description,
    annotations: { openWorldHint: false, ...spec.annotations },
    writes: spec.writes ?? false,
    inputSchema: (c) => withPaths(typeInputSchema(spec.type), c, spec.paths),
    async run(c, args) {
      const translated: Record<string, unknown> = { ...args };
      for (const field of Object.keys(spec.paths)) if (field in args) translated[field] = libraryPath(c, args[field], `arguments.${field}`);
      const result = await c.env.tools.call(c.principal, asToolRecord(c, spec.type, (await spec.config?.(c)) ?? {}), translated, { root: c.rootNode, via: viaOf(c) });
      return result as Record<string, unknown>;
    },
  };
}

export const lsTool = libraryTool({
  type: 'ls',
  title: 'List a folder',
  description: "Lists a folder's children (name, path, type, size, version). Without a path: the endpoint's folder.",
  annotations: { readOnlyHint: true },
  paths: { path: 'the folder' },
});

export const catTool = libraryTool({
  type: 'cat',
  title: 'Read a node',
  description:
    "Reads one node's current content: JSON as a value, Markdown and text files as text, other files as base64; with its version. " +
    'For a large node pass `lines` ("START-END", 1-based) or `bytes` ("START-END", 0-based) to get just that slice with total_lines and total_bytes, and page on.',
  annotations: { readOnlyHint: true },
  paths: { path: 'the node' },
});

export const treeTool = libraryTool({
  type: 'tree',
  title: 'Tree of a folder',
  description: 'The nested tree beneath a folder (names, paths, types) to a depth (default 3).',
  annotations: { readOnlyHint: true },
  paths: { path: 'the folder' },
});

export const writeTool = libraryTool({
  type: 'write',
  title: 'Write a node',
  description:
    'Creates or updates a JSON, Markdown or file node (parent folders are created). Each write is a new version attributed to this endpoint; ' +
    'pass `message` to say why, and `base_version` to refuse the write if someone changed the node meanwhile.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  writes: true,
  paths: { path: 'the node to write' },
});

/**
 * The project's search index over the endpoint's folder, offered when a search tool is bound to
 * the endpoint or one of the project's search tools covers the folder (the index exists then);
 * it takes that tool's defaults.
 */
export async function searchToolOf(c: CallContext, bound?: ToolRecord[]): Promise<ToolRecord | null> {
  const boundSearch = (bound ?? (await c.env.endpoints.boundTools(c.endpoint))).find((t) => t.type === 'search');
  if (boundSearch) return boundSearch;
  const rootOf = (t: ToolRecord) => {
    if (!t.node_id) return '';
    const node = c.env.content.findById(t.node_id);
    return node && node.state === 'active' && node.projectId === t.project_id ? node.path : null;
  };
  return (await c.env.tools.listForProject(c.principal, projectOf(c))).find((t) => {
    if (t.type !== 'search') return false;
    const root = rootOf(t);
    return root !== null && pathInScope(root, c.root);
  }) ?? null;
}

export const searchTool = libraryTool({
  type: 'search',
  title: 'Search',
  description:
    'Full-text search (BM25, plus vectors when an embedding provider is configured) over the content beneath the endpoint\'s folder. ' +
    'Answers the best chunks with path, snippet (matches in **bold**), heading path and score; read a hit with `cat`.',
  annotations: { readOnlyHint: true },
  paths: { path_prefix: 'only nodes beneath this folder' },
  config: async (c) => (await searchToolOf(c))?.config ?? {},
});

export const grepTool = libraryTool({
  type: 'grep',
  title: 'Grep',
  description:
    "Finds the lines matching a regular expression (RE2 syntax, or a plain string with fixed_strings) in the text nodes beneath the endpoint's folder: " +
    'path, line number and text, with context_lines around each; read more of a file with `cat` and `lines`.',
  annotations: { readOnlyHint: true },
  paths: { path_prefix: 'only nodes beneath this path' },
});
