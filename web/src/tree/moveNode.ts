import { api } from '../api/client.ts';
import { parentOf } from './treeStore.ts';

/** Why `path` cannot go into `folder`, or null when it can (checked before asking the server). */
export function moveRefusal(path: string, folder: string): string | null {
  if (folder === path || folder.startsWith(`${path}/`)) return `${path} cannot be moved into itself.`;
  if (parentOf(path) === folder) return `${path} is already in /${folder}.`;
  return null;
}

/** Moves a node (a folder with everything beneath it) into a folder, keeping its name; answers its new path. */
export async function moveInto(projectId: string, path: string, folder: string): Promise<string> {
  const refusal = moveRefusal(path, folder);
  if (refusal) throw new Error(refusal);
  const name = path.slice(path.lastIndexOf('/') + 1);
  const newPath = folder ? `${folder}/${name}` : name;
  await api('POST', `/content/${projectId}/mv`, { old_path: path, new_path: newPath });
  return newPath;
}
