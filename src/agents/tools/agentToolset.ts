import type { ContentStore } from '../../content/contentStore.ts';
import type { Logger } from '../../logging/logger.ts';
import { normalizePath } from '../../content/paths.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import { DomainError } from '../../errors/domainError.ts';
import { pathInScope } from '../../policies/scope.ts';
import type { EndpointLimits } from '../../sandbox/limits.ts';
import { toolSchemas } from '../../tools/registry.ts';
import type { SearchIndexer } from '../../search/indexer.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';
import type { Tools } from '../../tools/tools.ts';
import type { ToolContent, ToolSandbox } from '../../tools/toolType.ts';
import { unstoredTool } from '../../tools/unstoredTool.ts';
import type { ToolCallRequest, ToolDefinition } from '../../llm/provider.ts';
import { accessFor, actingThrough, boundToolReach, relativeTo, toolWrites, type AccessReach } from './reach.ts';

/** A bash tool of an agent as a turn sees it: a shell over its node's subtree ('' = the project). */
export interface BashReach {
  id: string;
  name: string;
  nodeId: string | null;
  path: string;
  mode: 'read' | 'read_write';
  limits: EndpointLimits | null;
}

export interface ToolsetEnv {
  logger: Logger;
  tools: Tools;
  content: ContentStore;
  indexer: SearchIndexer;
}

/** What a tool call came to: its result (or error) as the model gets it, and the versions it wrote. */
export interface ToolOutcome {
  result: unknown;
  isError: boolean;
  versions: { path: string; version: number }[];
}

/** A tool of the project bound to the agent: offered under its binding's name, run on its own node. */
export interface BoundReach {
  bindingId: string;
  name: string;
  description: string;
  tool: ToolRecord;
  /** The tool's node where it is now ('' = the project). */
  nodePath: string;
}

/**
 * An agent's open workspace as the toolset uses it: a view of the content (and a sandbox over it)
 * with its drafts, read again (`refresh`) before each tool call.
 */
export type DraftView = ToolContent & ToolSandbox & { inRoots(path: string): boolean; refresh(): Promise<void> };

export interface AgentToolset {
  definitions: ToolDefinition[];
  run(call: ToolCallRequest): Promise<ToolOutcome>;
}

/** The library's types an access may offer, with the argument that names a path. */
const PATH_ARG: Record<string, string> = { ls: 'path', cat: 'path', tree: 'path', write: 'path', query_json: 'path', search: 'path_prefix', grep: 'path_prefix', blame: 'path' };
const WRITES = new Set(['write']);

const DESCRIPTIONS: Record<string, string> = {
  ls: "Lists a folder's children (name, path, type, size, version). Without a path: the folders this agent may reach.",
  cat:
    "Reads one node's current content: JSON as a value, Markdown and text as text, other files as base64; with its version. " +
    'For a large node pass `lines` ("START-END", 1-based) or `bytes` to get just that slice with total_lines and total_bytes.',
  grep: 'Finds the lines matching a regular expression (RE2, or a plain string with fixed_strings) in the text nodes beneath path_prefix: path, line number, text and context_lines around each.',
  tree: 'The nested tree beneath a folder (names, paths, types) to a depth (default 3).',
  blame:
    'Who last changed each line of a Markdown, text or JSON node: runs of lines with the version, actor_type (user or agent), author, time and message; for JSON each key path too. Pass `version` for an earlier version.',
  query_json: 'Reads a JSON node at a JSON Pointer (RFC 6901), optionally shaped by a JMESPath expression.',
  search:
    'Full-text search (BM25, plus vectors when configured) over the content this agent may read. Answers the best chunks with path, snippet, heading path and score; read a hit with cat.',
  write:
    'Creates or updates a JSON, Markdown or file node (parent folders are created). Each write is a new version attributed to this agent: pass `message` to say why, and `base_version` to refuse the write if the node changed meanwhile.',
};

/**
 * The tools an agent is offered in a turn, and what a call does. The library's types (ls, cat,
 * tree, query_json, search, grep, blame, write) take project paths; each call goes through the access that
 * covers its path (`accessFor`) and runs in the tools library as the agent narrowed to that
 * access, so the library keeps it inside the node and the policy decides the rest. Bash tools run
 * the library's shell type over their node. Writes are offered only when the chatter may write.
 * While the agent has a workspace open, calls on paths inside it run over the draft (the same tool
 * types, given the workspace as their content and sandbox): its writes go there, not live.
 */
export function agentToolset(
  env: ToolsetEnv,
  agent: ConnectionRecord,
  accesses: readonly AccessReach[],
  bashTools: readonly BashReach[],
  mayWrite: boolean,
  workspace: DraftView | null = null,
  boundTools: readonly BoundReach[] = [],
): AgentToolset {
  const reach = mayWrite ? accesses : accesses.map((a) => ({ ...a, mode: 'read' as const }));
  const offered = (type: string) => reach.some((a) => a.tools.includes(type) && (!WRITES.has(type) || a.mode === 'read_write'));
  const hasIndex = env.indexer.index(agent.project_id) !== null;
  const types = Object.keys(PATH_ARG).filter((type) => offered(type) && (type !== 'search' || hasIndex));
  const reachable = reach.map((a) => `"${a.path === '' ? '' : a.path}"${a.mode === 'read' ? ' (read-only)' : ''}`).join(', ');
  const definitions: ToolDefinition[] = types.map((type) => ({ name: type, description: DESCRIPTIONS[type]!, inputSchema: pathSchema(type, reachable) }));
  const taken = new Set(types);
  const bashByName = new Map<string, BashReach>();
  for (const b of bashTools) {
    // A bash tool named like a library type would shadow it: the library type keeps the name.
    const name = taken.has(b.name) ? `${b.name}_shell` : b.name;
    taken.add(name);
    bashByName.set(name, mayWrite ? b : { ...b, mode: 'read' });
    definitions.push({ name, description: bashDescription(b, mayWrite), inputSchema: bareSchema('shell') });
  }
  const boundByName = new Map<string, BoundReach>();
  for (const b of boundTools) {
    if (!mayWrite && toolWrites(b.tool.type, b.tool.config)) continue;
    const name = taken.has(b.name) ? `${b.name}_bound` : b.name;
    taken.add(name);
    boundByName.set(name, b);
    const where = b.nodePath === '' ? 'the whole project' : `"${b.nodePath}"`;
    definitions.push({ name, description: `${b.description} (a ${b.tool.type} tool bound to ${where}; paths are relative to it)`, inputSchema: bareSchema(b.tool.type) });
  }

  const overDraft = (path: string) => (workspace?.inRoots(path) ? { content: workspace, sandbox: workspace } : {});
  const call = async (type: string, through: { id: string; nodeId: string | null; path: string; mode: 'read' | 'read_write' }, config: Record<string, unknown>, args: Record<string, unknown>, where: string) =>
    env.tools.call(
      actingThrough(agent, through),
      unstoredTool({ id: `${agent.id}:${through.id}:${type}`, projectId: agent.project_id, nodeId: through.nodeId, type, config, at: agent.updated_at }),
      args,
      overDraft(where),
    );

  async function runLibrary(type: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    const field = PATH_ARG[type]!;
    const raw = args[field];
    if (raw !== undefined && typeof raw !== 'string') throw new DomainError('VALIDATION_ERROR', `arguments.${field} must be a string`, [{ field: `arguments.${field}`, message: 'must be a string' }]);
    const given = typeof raw === 'string' ? raw.replace(/^\/+/, '') : '';
    if (given === '' && type === 'ls') return { result: rootsListing(reach), isError: false, versions: [] };
    if (given === '' && type === 'search') return searchEverywhere(args);
    const path = given === '' ? soleRoot(reach, type) : normalizePath(given, `arguments.${field}`);
    const a = accessFor(reach, path, type, WRITES.has(type));
    const translated = { ...args, [field]: relativeTo(a.path, path) };
    if (type === 'write' && translated.message === undefined) translated.message = `Agent "${agent.name}": write ${path}`;
    const result = await call(type, a, {}, translated, path);
    // A write into the workspace is a draft, not a version.
    const versions = type === 'write' && !workspace?.inRoots(path) ? [{ path: (result as { path: string }).path, version: (result as { version: number }).version }] : [];
    return { result, isError: false, versions };
  }

  /** A search without a prefix: every access that offers search, best hits first. */
  async function searchEverywhere(args: Record<string, unknown>): Promise<ToolOutcome> {
    const roots = reach.filter((a) => a.tools.includes('search') && !reach.some((b) => b !== a && b.tools.includes('search') && b.path !== a.path && pathInScope(b.path, a.path)));
    if (roots.length === 0) throw new DomainError('FORBIDDEN', 'No access of this agent offers search.');
    type Hit = { score: number };
    const answers = await Promise.all(roots.map((a) => call('search', a, {}, { ...args, path_prefix: '' }, a.path) as Promise<{ query: string; mode: string; results: Hit[] }>));
    const topK = typeof args.top_k === 'number' ? args.top_k : 10;
    const results = answers.flatMap((r) => r.results).sort((x, y) => y.score - x.score).slice(0, topK);
    return { result: { query: answers[0]!.query, mode: answers[0]!.mode, results }, isError: false, versions: [] };
  }

  async function runBash(b: BashReach, args: Record<string, unknown>): Promise<ToolOutcome> {
    // With a workspace open, a shell writes only into the draft: over a folder beside it, it only reads (the draft included).
    const writable = b.mode === 'read_write' && (!workspace || workspace.inRoots(b.path));
    const config = { writable, ...(b.limits ? { limits: b.limits } : {}) };
    const through = { id: b.id, nodeId: b.nodeId, path: b.path, mode: writable ? b.mode : ('read' as const) };
    const result = (await env.tools.call(
      actingThrough(agent, through),
      unstoredTool({ id: `${agent.id}:${b.id}:shell`, projectId: agent.project_id, nodeId: b.nodeId, type: 'shell', config, at: agent.updated_at }),
      args,
      workspace ? { content: workspace, sandbox: workspace } : {},
    )) as { changes?: { path: string; action: string }[]; version: number | null };
    const versions: ToolOutcome['versions'] = [];
    if (result.version === null) return { result, isError: false, versions };
    for (const change of result.changes ?? []) {
      const node = change.action === 'deleted' ? null : env.content.findByPath(agent.project_id, change.path);
      if (node) versions.push({ path: node.path, version: node.version });
    }
    return { result, isError: false, versions };
  }

  /** A bound tool runs as the agent over the tool's node: binding it was the grant. */
  async function runBound(b: BoundReach, args: Record<string, unknown>): Promise<ToolOutcome> {
    const result = (await env.tools.call(actingThrough(agent, boundToolReach({ id: b.bindingId }, b.tool, b.nodePath)), b.tool, args, overDraft(b.nodePath))) as {
      path?: unknown;
      version?: unknown;
      project_version?: unknown;
    };
    const live = b.tool.type === 'write' && typeof result.path === 'string' && typeof result.version === 'number' && result.project_version !== null;
    return { result, isError: false, versions: live ? [{ path: result.path as string, version: result.version as number }] : [] };
  }

  return {
    definitions,
    async run(request) {
      try {
        if (request.argumentsError) throw new DomainError('VALIDATION_ERROR', `The arguments are not a JSON object: ${request.argumentsError}`);
        await workspace?.refresh();
        const bash = bashByName.get(request.name);
        if (bash) return await runBash(bash, request.arguments);
        const bound = boundByName.get(request.name);
        if (bound) return await runBound(bound, request.arguments);
        if (!types.includes(request.name)) throw new DomainError('NOT_FOUND', `This agent has no tool "${request.name}"; its tools: ${[...taken].join(', ')}.`);
        return await runLibrary(request.name, request.arguments);
      } catch (err) {
        const error = errorOf(err);
        if (error.code === 'INTERNAL_ERROR') env.logger.error({ err, agent: agent.id, tool: request.name }, 'agent tool call failed');
        return { result: { error }, isError: true, versions: [] };
      }
    },
  };
}

/** A tool's input schema with its path argument described for this agent. */
function pathSchema(type: string, reachable: string): Record<string, unknown> {
  const schema = bareSchema(type);
  const prop = (schema.properties as Record<string, { description?: string }> | undefined)?.[PATH_ARG[type]!];
  if (prop) prop.description = `a project path, such as "docs/notes.md"; this agent reaches ${reachable}${type === 'ls' || type === 'search' ? '; empty = all of them' : ''}`;
  return schema;
}

function bareSchema(type: string): Record<string, unknown> {
  const schema = structuredClone(toolSchemas(type).input) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

function bashDescription(b: BashReach, mayWrite: boolean): string {
  const where = b.path === '' ? 'the whole project' : `"${b.path}"`;
  const writes = b.mode === 'read_write' && mayWrite ? 'files it changes are written back as one version attributed to this agent' : 'the folder is read-only';
  return `Runs a shell command (sh -c) in a sandbox whose working directory holds ${where}: ls, grep, sed, awk, jq, python3 and the usual tools; no network; limited time, memory and output; ${writes}.`;
}

/** `ls` with no path: the folders the agent may reach. */
function rootsListing(reach: readonly AccessReach[]) {
  return { path: '', roots: reach.map((a) => ({ path: a.path, mode: a.mode, tools: a.tools })) };
}

/** An empty path means the one root when there is exactly one that offers the tool. */
function soleRoot(reach: readonly AccessReach[], type: string): string {
  const roots = reach.filter((a) => a.tools.includes(type));
  if (roots.length === 1) return roots[0]!.path;
  throw new DomainError('VALIDATION_ERROR', `This agent reaches several folders: name one of ${roots.map((a) => `"${a.path}"`).join(', ')} or a path beneath it.`, [
    { field: `arguments.${PATH_ARG[type]}`, message: 'required: the agent has several accesses' },
  ]);
}

function errorOf(err: unknown): { code: string; message: string; details?: unknown } {
  const e = err as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof e?.code === 'string' && typeof e.message === 'string' && /^[A-Z_]+$/.test(e.code)) {
    return { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  }
  // Anything else is our fault, not the model's: say so without internals.
  return { code: 'INTERNAL_ERROR', message: 'The tool failed unexpectedly; the error was logged.' };
}
