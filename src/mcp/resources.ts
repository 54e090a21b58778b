import { ErrorCode, McpError, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { NodeInfo, TreeNode } from '../content/contentStore.ts';
import { asDomainError } from '../errors/domainError.ts';
import { endpointPath, grantIn, projectOf, type CallContext } from './context.ts';

/**
 * The endpoint's content as MCP resources: every json, markdown and file node beneath its
 * folder is `cns://{project_id}/{path}` (each name URI-encoded), a version of it
 * `cns://{project_id}/{path}@{version}`. Folders are not listed (they have no content); reading
 * one gives its listing.
 */

/** Nodes visited per `resources/list` page (folders count, so a page may hold fewer resources). */
export const RESOURCE_PAGE = 200;
/** Larger contents are not inlined into a resource read; the REST `raw` route streams them. */
export const MAX_RESOURCE_BYTES = 10 * 1024 * 1024;

/** MCP's code for an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

export function resourceUri(projectId: string, path: string, version?: number): string {
  return `cns://${projectId}/${encodePath(path)}${version === undefined ? '' : `@${version}`}`;
}

const mimeOf = (n: Pick<NodeInfo, 'type' | 'mimeType'>) =>
  n.type === 'json' ? 'application/json' : n.type === 'markdown' ? 'text/markdown' : n.type === 'folder' ? 'application/json' : (n.mimeType ?? 'application/octet-stream');

function asResource(projectId: string, n: NodeInfo): Resource {
  return { uri: resourceUri(projectId, n.path), name: n.name, title: n.path, mimeType: mimeOf(n), size: n.size, annotations: { lastModified: n.updatedAt } };
}

/** A page of the resources beneath the endpoint's folder, depth first; the cursor is the tree's. */
export async function listResources(c: CallContext, cursor: string | undefined): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const g = await grantIn(c, 'content:read');
  const { access, content } = c.env;
  const visibility = (p: string) => (access.mayPath(g, p) ? 'in' : access.onTheWay(g, p) ? 'way' : 'out') as 'in' | 'way' | 'out';
  const page = await mcpErrors(() => content.treePage(projectOf(c), c.root, { maxDepth: -1, limit: RESOURCE_PAGE, cursor: cursor ?? null, visibility }));
  const resources: Resource[] = [];
  const walk = (n: TreeNode) => {
    if (n.type !== 'folder') resources.push(asResource(projectOf(c), n));
    for (const child of n.children ?? []) walk(child);
  };
  walk(page.root);
  return page.nextCursor ? { resources, nextCursor: page.nextCursor } : { resources };
}

export function resourceTemplates(c: CallContext): ResourceTemplate[] {
  const base = `cns://${projectOf(c)}/${encodePath(c.root)}`;
  return [
    {
      uriTemplate: `${base}/{+path}`,
      name: 'node',
      title: `A node beneath ${c.root}`,
      description: `The current content of a node; path is relative to "${c.root}", e.g. notes.md or guides/setup.md.`,
    },
    {
      uriTemplate: `${base}/{+path}@{version}`,
      name: 'node-version',
      title: `A version of a node beneath ${c.root}`,
      description: 'The content of one version of a node (the `versions` tool lists them).',
    },
  ];
}

/** Reads a resource URI of this endpoint (its project, beneath its folder). */
export async function readResource(c: CallContext, uri: string): Promise<ReadResourceResult> {
  const { path, version } = parseUri(c, uri);
  return mcpErrors(async () => {
    const g = await grantIn(c, 'content:read');
    c.env.access.requirePath(g, path);
    const { content } = c.env;
    const node = content.getByPath(projectOf(c), path);
    if (version === undefined && node.type === 'folder') {
      const children = c.env.access.visibleChildren(g, path, content.listChildren(projectOf(c), path));
      const listing = { path, children: children.map((n) => ({ name: n.name, path: n.path, type: n.type, uri: resourceUri(projectOf(c), n.path), size: n.size, version: n.version })) };
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(listing) }] };
    }
    const size = version === undefined ? node.size : content.getVersion(projectOf(c), { id: node.id }, version).size;
    if (size > MAX_RESOURCE_BYTES) {
      throw new McpError(ErrorCode.InvalidParams, `${path} is ${size} bytes, more than a resource read carries (${MAX_RESOURCE_BYTES}); download it with GET /api/v1/content/${projectOf(c)}/raw?path=${encodeURIComponent(path)}.`);
    }
    const { bytes, type } =
      version === undefined
        ? { ...(await content.readContent(projectOf(c), { id: node.id })), type: node.type }
        : await content.versionContent(projectOf(c), { id: node.id }, version).then((v) => ({ bytes: v.bytes, type: v.version.type }));
    const mimeType = mimeOf({ type, mimeType: node.mimeType });
    const text = type === 'file' ? utf8(bytes) : bytes.toString('utf8');
    return { contents: [text === null ? { uri, mimeType, blob: bytes.toString('base64') } : { uri, mimeType, text }] };
  });
}

/** `cns://{project}/{path}[@{version}]` of this endpoint's project, its path held to the endpoint's folder. */
function parseUri(c: CallContext, uri: string): { path: string; version?: number } {
  const prefix = `cns://${projectOf(c)}/`;
  if (!uri.startsWith(prefix)) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: this server serves ${prefix}… URIs.`, { uri });
  let rest = uri.slice(prefix.length);
  let version: number | undefined;
  const at = /@(\d{1,9})$/.exec(rest);
  if (at) {
    version = Number(at[1]);
    rest = rest.slice(0, at.index);
  }
  let raw: string;
  try {
    raw = rest.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new McpError(ErrorCode.InvalidParams, 'The resource URI is not validly percent-encoded.', { uri });
  }
  return { path: mcpErrorsSync(() => endpointPath(c, raw, 'uri')), version };
}

/** Text when the bytes are UTF-8 without NUL bytes, else null (sent as a base64 blob). */
function utf8(bytes: Buffer): string | null {
  if (bytes.subarray(0, 8192).includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Resource requests answer protocol errors: not found is MCP's -32002, the rest invalid params. */
function toMcpError(err: unknown): unknown {
  if (err instanceof McpError) return err;
  const known = asDomainError(err);
  if (!known) return err;
  if (known.code === 'NOT_FOUND') return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${known.message}`, { code: known.code, details: known.details });
  return new McpError(ErrorCode.InvalidParams, known.message, { code: known.code, details: known.details });
}

async function mcpErrors<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw toMcpError(err);
  }
}

function mcpErrorsSync<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw toMcpError(err);
  }
}
