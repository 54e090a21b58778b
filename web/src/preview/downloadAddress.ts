import { api, query } from '../api/client.ts';

/**
 * A short-lived address of a node version's bytes (GET /nodes/{id}/download), made same-origin:
 * the configured base URL may name another host (a proxy). No credential travels with it: the
 * address is the grant, so `<img>`, `<video>` and plain `fetch` can use it.
 */
export async function downloadAddress(nodeId: string, version?: number): Promise<string> {
  const r = await api<{ download_url: string }>('GET', `/nodes/${nodeId}/download${query({ version })}`);
  const url = new URL(r.download_url, location.origin);
  return url.pathname + url.search;
}
