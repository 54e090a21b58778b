import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../logging/logger.ts';
import { findTool, toolsOf } from './catalog.ts';
import type { CallContext } from './context.ts';
import { instructionsFor } from './instructions.ts';
import { listResources, readResource, resourceTemplates } from './resources.ts';
import { refusal, toolError, toolResult } from './results.ts';
import type { Lookup, McpTool } from './tools/mcpTool.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The request's context, which the HTTP gate resolved for this very request (the server's
 * connection as it is now, the caller) and handed over with the transport's auth info: a session
 * never answers from what was true when it began.
 */
export function contextOf<C = CallContext>(extra: Extra): C {
  const c = extra.authInfo?.extra?.mcp as C | undefined;
  if (!c) throw new McpError(ErrorCode.InternalError, 'The request reached the MCP server without passing its gate.');
  return c;
}

/** The SDK gives every server its own Ajv (used only to check elicitation answers): one is enough. */
let validator: AjvJsonSchemaValidator | undefined;

/** What a server's tools are for a request's context. */
export interface ToolCatalog<C> {
  toolsOf(c: C): Promise<McpTool<C>[]>;
  findTool(c: C, name: string): Promise<Lookup<C>>;
}

export interface ServerOptions {
  version: string;
  logger: Logger;
}

/**
 * An MCP server whose tools follow the request's context (the SDK's low-level `Server`, because
 * the list is not fixed): tools/list and tools/call answered from the catalog, a refused or failed
 * call as a tool error. Only the instructions are written once, at initialization.
 */
export function toolServer<C>(catalog: ToolCatalog<C>, options: ServerOptions & { instructions: string; resources: boolean }): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server(
    { name: 'cns', title: 'Content Node Service', version: options.version },
    {
      capabilities: { tools: { listChanged: false }, ...(options.resources ? { resources: { listChanged: false } } : {}) },
      instructions: options.instructions,
      jsonSchemaValidator: validator,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const c = contextOf<C>(extra);
    return {
      tools: (await catalog.toolsOf(c)).map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema(c), annotations: { title: t.title, ...t.annotations } })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const c = contextOf<C>(extra);
    const { name } = request.params;
    const found = await catalog.findTool(c, name);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found on this server; tools/list names the available ones.`);
    if ('refused' in found) return refusal('FORBIDDEN', found.refused);
    try {
      return toolResult(await found.tool.run(c, request.params.arguments ?? {}));
    } catch (err) {
      return toolError(err, options.logger, name);
    }
  });
  return server;
}

/**
 * The MCP server of one session on an endpoint: its tools follow the endpoint's mode, the
 * caller's role and the bound tools; its resources are the nodes beneath its folder. A change of
 * the endpoint shows at the next request.
 */
export async function endpointServer(first: CallContext, options: ServerOptions): Promise<Server> {
  const server = toolServer({ toolsOf, findTool }, { ...options, instructions: await instructionsFor(first), resources: true });
  server.setRequestHandler(ListResourcesRequestSchema, (request, extra) => listResources(contextOf(extra), request.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (_request, extra) => ({ resourceTemplates: resourceTemplates(contextOf(extra)) }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => readResource(contextOf(extra), request.params.uri));
  return server;
}
