import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import type { CommandContext } from '../client/context.ts';
import { usageError } from '../client/errors.ts';
import { FolderStore } from './folderState.ts';

/** Normalizes --path the way the server stores scopes: no leading or trailing slash. */
function scopeOf(path: string | undefined): string {
  return (path ?? '').split('/').filter(Boolean).join('/');
}

/**
 * The sync a folder is bound to. The first run bootstraps a `sync` connection (provider
 * `folder`) with the caller's sign-in and keeps its id and key in DIR/.cns/; later runs use only
 * that key, so the sign-in may expire without stopping the sync. The sync, and so the author of
 * every version it writes, is named `--name`, else `folder <host name>`: the folder's path on
 * this machine is never sent.
 */
export async function bindFolder(ctx: CommandContext, root: string, flags: { project?: string; path?: string; name?: string }): Promise<FolderStore> {
  const store = new FolderStore(root);
  if (store.exists()) {
    const config = store.readConfig();
    if (flags.project && (await ctx.project()).id !== config.projectId) {
      throw usageError(`${root} is already synced with project ${config.projectId}; use another folder`);
    }
    if (flags.path !== undefined && scopeOf(flags.path) !== config.scopePath) {
      throw usageError(`${root} is already synced with "${config.scopePath || '/'}"; use another folder for "${scopeOf(flags.path)}"`);
    }
    if (flags.name !== undefined && flags.name !== config.name) {
      throw usageError(`${root} is already synced${config.name ? ` as "${config.name}"` : ''}; --name names a sync on its first run only`);
    }
    return store;
  }
  if (flags.name !== undefined && (flags.name.trim() === '' || flags.name.length > 200)) throw usageError('--name must be 1 to 200 characters');
  const project = await ctx.project();
  mkdirSync(root, { recursive: true });
  const { data } = await ctx.api.post<{ sync: { id: string; name: string; scope_path: string }; key: string }>('/sync/bootstrap', {
    project_id: project.id,
    provider: 'folder',
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    config: { path: scopeOf(flags.path), host: hostname() },
  });
  store.init({ version: 1, server: ctx.server, projectId: project.id, syncId: data.sync.id, scopePath: data.sync.scope_path, name: data.sync.name }, data.key);
  return store;
}
