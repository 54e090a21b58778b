import type { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import type { ContentAccess, ContentAction, ContentGrant } from '../policies/contentAccess.ts';
import type { ExecRequest, ExecResult } from '../sandbox/executor.ts';
import type { SearchIndexer } from '../search/indexer.ts';
import type { ToolRecord } from './toolStore.ts';

/**
 * The content reads and writes tool types use: the content store, or a view of it (an agent's
 * workspace: the live content with the agent's draft changes over it).
 */
export type ToolContent = Pick<ContentStore, 'blame' | 'findById' | 'findByPath' | 'listChildren' | 'readContent' | 'readValue' | 'tree' | 'write'>;

/** How the shell tool runs a command; `timings` only from the executor itself. */
export interface ToolSandbox {
  exec(req: ExecRequest): Promise<Omit<ExecResult, 'timings'> & { timings?: ExecResult['timings'] }>;
}

/** What a tool may use: content only through the content store, rights only through the policy. */
export interface ToolEnv {
  content: ToolContent;
  access: ContentAccess;
  indexer: SearchIndexer;
  /** Runs shell commands over a subtree: the sandbox runtime every surface shares (or an agent's workspace, over its draft). */
  sandbox: ToolSandbox;
}

/** One call of a tool, as its type's `run` receives it. */
export interface ToolInvocation<C, A> {
  env: ToolEnv;
  tool: ToolRecord;
  config: C;
  args: A;
  principal: Principal;
  /** The tool's node ('' and null for a tool bound to the whole project). */
  root: string;
  rootNode: NodeInfo | null;
  /** The caller's grant for `action` on the tool's project (404/403 as the policy decides). */
  grant(action: ContentAction): Promise<ContentGrant>;
  /**
   * A project path from a path relative to the tool's node; a path outside the tool's subtree
   * is refused (422), one outside the caller's scope is forbidden (403); with `listing`, a folder
   * above the caller's scope is allowed (its listing shows only the way down).
   */
  resolve(g: ContentGrant, relative: string | undefined, options?: { field?: string; listing?: boolean }): string;
  /** True when `path` lies in the tool's subtree (its second scope, on top of the caller's). */
  inTool(path: string): boolean;
  /** What the call came through (`via MCP endpoint "docs"`): changes made without a message say so. */
  via?: string;
}

/**
 * A tool type: its config and its input, each a zod schema (the input's JSON Schema is what MCP
 * clients and LLM providers are given), and what a call does.
 */
export interface ToolType<C = unknown, A = unknown> {
  type: string;
  summary: string;
  config: z.ZodType<C>;
  input: z.ZodType<A>;
  /** The node kinds the tool may be bound to. */
  binds: 'folder' | 'any';
  run(call: ToolInvocation<C, A>): Promise<unknown>;
}

export const defineToolType = <C, A>(t: ToolType<C, A>): ToolType => t as unknown as ToolType;
