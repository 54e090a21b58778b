import { api } from '../api/client.ts';
import { ConfigBlock } from './ConfigBlock.tsx';
import { ConnectionList } from './ConnectionList.tsx';
import { scopeLabel, when } from './format.ts';
import { StatusBadge } from './StatusBadge.tsx';
import type { McpEndpoint, Page } from './types.ts';
import { useLoad } from './useLoad.ts';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** The mode as the API names it (`read` unless the endpoint was made read_write), and what it offers a client. */
const MODE_OFFERS: Record<McpEndpoint['mode'], string> = {
  read: 'reading tools only',
  read_write: 'reading and writing tools (write, mkdir, mv, rm, rollback)',
};

/**
 * The project's MCP endpoints, each with the client configuration its record carries, ready to
 * paste (the key, shown only when the endpoint was made, goes where the placeholder is).
 */
export function McpEndpoints({ projectId }: { projectId: string }) {
  const endpoints = useLoad(() => api<Page<'mcp_endpoints', McpEndpoint>>('GET', `/mcp-endpoints?project_id=${encodeURIComponent(projectId)}&limit=200`), [projectId]);
  const list = endpoints.data?.mcp_endpoints;
  return (
    <ConnectionList
      id="settings-mcp"
      title="MCP endpoints"
      error={endpoints.error}
      items={list}
      empty={
        <>
          No MCP endpoints. One serves a folder to MCP clients: <code>POST /mcp-endpoints</code> (see the README, “Connect an MCP client”).
        </>
      }
    >
      {(e) => (
        <>
          <p class="connection-title">
            <strong>{e.name}</strong> <StatusBadge status={e.status} />
          </p>
          <dl>
            <dt>Folder</dt>
            <dd>{scopeLabel(e.path)}</dd>
            <dt>Access</dt>
            <dd>
              <code>{e.mode}</code>: {MODE_OFFERS[e.mode]}
            </dd>
            <dt>Address</dt>
            <dd>
              <code>{e.server_url}</code>
            </dd>
            {e.tools.length > 0 && (
              <>
                <dt>Extra tools</dt>
                <dd>{e.tools.map((t) => t.name).join(', ')}</dd>
              </>
            )}
            <dt>Key</dt>
            <dd>
              <code>{e.key_prefix}…</code>
            </dd>
            <dt>Last used</dt>
            <dd>{when(e.last_used_at)}</dd>
          </dl>
          <p>
            Client configuration (<code>mcpServers</code> of Claude Code's <code>.mcp.json</code>, and clients that take a URL); put the endpoint's key in
            place of <code>&lt;MCP endpoint key&gt;</code>:
          </p>
          <ConfigBlock label={`Client configuration for ${e.name}`} text={json(e.client_config)} />
          <details>
            <summary>Other clients</summary>
            <p>
              Cursor (<code>{e.clients.cursor.file}</code>):
            </p>
            <ConfigBlock label={`Cursor configuration for ${e.name}`} text={json(e.clients.cursor.config)} />
            <p>
              VS Code (<code>{e.clients.vscode.file}</code>):
            </p>
            <ConfigBlock label={`VS Code configuration for ${e.name}`} text={json(e.clients.vscode.config)} />
            <p>
              Claude Desktop (<code>{e.clients.claude_desktop.file}</code>, through <code>mcp-remote</code>):
            </p>
            <ConfigBlock label={`Claude Desktop configuration for ${e.name}`} text={json(e.clients.claude_desktop.config)} />
            <p>Claude Code, from the command line:</p>
            <ConfigBlock label={`Claude Code command for ${e.name}`} text={e.clients.claude_code.command} />
          </details>
        </>
      )}
    </ConnectionList>
  );
}
