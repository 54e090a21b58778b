/** The shapes of the search routes the dashboard reads (README: Tools and search). */
export interface SearchTool {
  id: string;
  name: string;
  type: string;
  node_id: string | null;
  project_id: string;
}

export type IndexStatus = 'pending' | 'indexing' | 'ready' | 'error';

export interface SearchIndexState {
  status: IndexStatus;
  documents: number;
  chunks: number;
  lag_versions: number;
  mode: string;
  last_error: string | null;
}

export interface SearchHit {
  node_id: string;
  path: string;
  type: string;
  version: number;
  chunk_index: number;
  score: number;
  /** The matched words are marked `**like this**` (plain text otherwise: never HTML). */
  snippet: string;
  heading_path: string | null;
}

export interface SearchAnswer {
  query: string;
  mode: string;
  warning?: string;
  results: SearchHit[];
}
