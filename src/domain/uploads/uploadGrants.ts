import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { nowIso } from '../../util/ids.ts';

/** One issued upload address (a row of node_uploads, migration 008). */
export interface UploadGrantRow {
  id: string;
  project_id: string;
  node_id: string;
  parent_id: string | null;
  name: string;
  /** The target path when the address was issued. */
  path: string;
  /** The node's version when the address was issued; 0 = the upload creates the node. */
  base_version: number;
  size: number;
  mime_type: string | null;
  principal_kind: 'user' | 'key';
  principal_id: string;
  created_at: string;
  expires_at: string;
}

/**
 * The grants behind upload addresses. The signed address carries only the grant's id: what it
 * allows, and who asked, is read here at PUT time, and the PUT deletes the row inside its
 * commit's transaction (`consume`), so no address writes twice. Who asked (`principal_kind`,
 * `principal_id`) is resolved to the principal as it is now by `Authenticator.current`.
 */
export class UploadGrants {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  issue(row: UploadGrantRow): void {
    // Expired grants can never be used: drop them whenever a new one is issued.
    this.sql('DELETE FROM node_uploads WHERE expires_at < ?').run(nowIso());
    this.sql(
      `INSERT INTO node_uploads (id, project_id, node_id, parent_id, name, path, base_version, size, mime_type, principal_kind, principal_id, created_at, expires_at)
       VALUES (@id, @project_id, @node_id, @parent_id, @name, @path, @base_version, @size, @mime_type, @principal_kind, @principal_id, @created_at, @expires_at)`,
    ).run(row);
  }

  find(id: string): UploadGrantRow | undefined {
    return this.sql('SELECT * FROM node_uploads WHERE id = ?').get(id) as UploadGrantRow | undefined;
  }

  /** Deletes the grant; false when it was already gone (used by another PUT). */
  consume(id: string): boolean {
    return this.sql('DELETE FROM node_uploads WHERE id = ?').run(id).changes === 1;
  }
}
