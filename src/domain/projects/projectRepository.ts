/**
 * What project lifecycle needs from content storage: make the (empty) repository of a new
 * project, and remove all of a project's data (repository and index) when it is deleted. The
 * content store implements it; the interface keeps the project domain independent of it.
 */
export interface ProjectRepositories {
  createProject(projectId: string): Promise<void>;
  deleteProject(projectId: string): Promise<void>;
  /** After the project's row is gone (deleteProject ran first): a cluster node has the other copies removed. */
  deleted?(projectId: string): Promise<void>;
}
