/** The shapes of the API answers the dashboard reads (README: Content, versions and the trash). */
export type NodeType = 'folder' | 'json' | 'markdown' | 'file';

export interface Entry {
  id: string;
  name: string;
  path: string;
  type: NodeType;
  size: number;
  version: number;
  children_count: number | null;
  updated_at: string;
}

export interface TreeNode extends Entry {
  children?: TreeNode[] | null;
}

export interface TreePage extends TreeNode {
  node_count: number;
  next_cursor: string | null;
  /** Every node of the page, flat (the tree's `children` nested). */
  entries?: Entry[];
}

export interface Organization {
  id: string;
  name: string;
  role: string | null;
}

export interface Project {
  id: string;
  org_id: string;
  name: string;
  description: string;
}

export interface CatAnswer {
  id: string;
  path: string;
  name: string;
  type: NodeType;
  version: number;
  content?: unknown;
  size?: number;
  mime_type?: string | null;
  download_url?: string;
}

export interface VersionRecord {
  version: number;
  actor_type: string;
  actor_id: string;
  author: string;
  /** The author a pushed git commit names, when it is not the actor who pushed it. */
  authored_by: string | null;
  created_at: string;
  message: string | null;
  operation: string;
  project_version: number;
}

export interface NodeDiff {
  kind: 'text' | 'json' | 'binary';
  unified_diff?: string;
  json_patch?: { op: string; path: string; value?: unknown; from?: string }[];
  identical?: boolean;
}

export interface TrashItem {
  id: string;
  trash_path: string;
  original_path: string | null;
  name: string;
  type: NodeType;
  deleted_at: string | null;
}

/** GET /content/{project}/blame: runs of lines with the commit that last changed them. */
export interface BlameAnswer {
  id: string;
  path: string;
  type: NodeType;
  version: number;
  line_count: number;
  ranges: { start_line: number; end_line: number; commit_id: string }[];
  commits: {
    commit_id: string;
    /** The node's version the commit made; null when the lines came from another file. */
    version: number | null;
    project_version: number | null;
    actor_type: string | null;
    author: string;
    authored_by: string | null;
    message: string;
    created_at: string;
  }[];
  keys: { pointer: string; commit_id: string }[] | null;
}
