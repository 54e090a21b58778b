import { rm } from 'node:fs/promises';
import * as fs from 'node:fs';
import { join } from 'node:path';
import git from 'isomorphic-git';

/**
 * What project lifecycle needs from content storage: make the (empty) repository of a new
 * project, and remove all of a project's data when it is deleted. The content store offers the
 * same two operations; this interface lets either back the project store.
 */
export interface ProjectRepositories {
  createProject(projectId: string): Promise<void>;
  deleteProject(projectId: string): Promise<void>;
}

/** The minimal backing: one empty bare repository `<dataDir>/<project_id>.git` per project. */
export class BareProjectRepositories implements ProjectRepositories {
  constructor(private readonly dataDir: string) {}

  pathOf(projectId: string): string {
    return join(this.dataDir, `${projectId}.git`);
  }

  async createProject(projectId: string): Promise<void> {
    const dir = this.pathOf(projectId);
    await git.init({ fs, dir, gitdir: dir, bare: true, defaultBranch: 'main' });
  }

  async deleteProject(projectId: string): Promise<void> {
    await rm(this.pathOf(projectId), { recursive: true, force: true });
  }
}
