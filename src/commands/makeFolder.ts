import type { ContentStore, WriteResult } from '../content/contentStore.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

export interface MakeFolderInput extends ChangeNote {
  path: string;
  /** The folder must not exist yet (409 when anything is at the path); otherwise an existing folder is `changed: false`. */
  exclusive?: boolean;
}

/** Creates a folder and its missing parents: one commit, none when it already exists. */
export function makeFolder(d: { content: Pick<ContentStore, 'mkdir' | 'createFolder'> }, g: ContentGrant, input: MakeFolderInput): Promise<WriteResult> {
  const options = { message: messageOf(input, `mkdir ${input.path}`) };
  return input.exclusive ? d.content.createFolder(g.projectId, g.actor, input.path, options) : d.content.mkdir(g.projectId, g.actor, input.path, options);
}
