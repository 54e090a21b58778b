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
 * that key, so the sign-in may expire without stopping the sync.
 */
export async function bindFolder(ctx: CommandContext, root: string, flags: { project?: string; path?: string }): Promise<FolderStore> {
  const store = new FolderStore(root);
  if (store.exists()) {
    const config = store.readConfig();
    if (flags.project && (await ctx.project()).id !== config.projectId) {
      throw usageError(`${root} is already synced with project ${config.projectId}; use another folder`);
    }
    if (flags.path !== undefined && scopeOf(flags.path) !== config.scopePath) {
      throw usageError(`${root} is already synced with "${config.scopePath || '/'}"; use another folder for "${scopeOf(flags.path)}"`);
    }
    return store;
  }
  const project = await ctx.project();
  mkdirSync(root, { recursive: true });
  const { data } = await ctx.api.post<{ sync: { id: string; scope_path: string }; key: string }>('/sync/bootstrap', {
    project_id: project.id,
    provider: 'folder',
    config: { path: scopeOf(flags.path), folder: root, host: hostname() },
  });
  store.init({ version: 1, server: ctx.server, projectId: project.id, syncId: data.sync.id, scopePath: data.sync.scope_path }, data.key);
  return store;
}
