import type { Migration } from '../migrate.ts';

/**
 * Folder syncs no longer carry the client's local path (issue 28): syncs made before were named
 * `folder <host>:<local path>` by default, which every version they wrote repeated as its author
 * (`agent:<name>`). Such default names become `folder <host>` (a name the user chose is left
 * alone), and the path is dropped from their config. History already written keeps its authors.
 */
export const folderSyncNamesMigration: Migration = {
  version: 22,
  name: 'folder_sync_names',
  sql: `
UPDATE connections
   SET name = CASE WHEN COALESCE(json_extract(config, '$.host'), '') <> '' THEN substr('folder ' || json_extract(config, '$.host'), 1, 200) ELSE 'folder' END
 WHERE kind = 'sync'
   AND json_extract(config, '$.provider') = 'folder'
   AND COALESCE(json_extract(config, '$.folder'), '') <> ''
   AND name = substr('folder ' || CASE WHEN COALESCE(json_extract(config, '$.host'), '') <> '' THEN json_extract(config, '$.host') || ':' ELSE '' END || json_extract(config, '$.folder'), 1, 200);
UPDATE connections
   SET config = json_remove(config, '$.folder')
 WHERE kind = 'sync' AND json_extract(config, '$.provider') = 'folder' AND json_type(config, '$.folder') IS NOT NULL;
`,
};
