import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface Upstream {
  url: string;
  /** The headers of every request it received, in order. */
  seen: IncomingHttpHeaders[];
  /** The method of each of those requests. */
  methods: string[];
  close(): Promise<void>;
}

/**
 * A small external MCP server (the SDK's own, stateful Streamable HTTP) on an ephemeral
 * loopback port with one tool, `add`. Like a real API it wants a key: no `x-api-key`, 401.
 */
export async function startUpstream(): Promise<Upstream> {
  const seen: IncomingHttpHeaders[] = [];
  const methods: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    seen.push(req.headers);
    methods.push(req.method ?? '');
    if (!req.headers['x-api-key']) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"missing x-api-key"}');
      return;
    }
    void (async () => {
      const id = req.headers['mcp-session-id'] as string | undefined;
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        if (id) {
          res.writeHead(404).end();
          return;
        }
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, created) });
        created.onclose = () => created.sessionId && sessions.delete(created.sessionId);
        const mcp = new McpServer({ name: 'upstream', version: '1.0.0' });
        mcp.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
          content: [{ type: 'text', text: String(a + b) }],
        }));
        await mcp.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    })().catch((e: unknown) => res.writeHead(500).end(String(e)));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    methods,
    async close() {
      for (const t of sessions.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
