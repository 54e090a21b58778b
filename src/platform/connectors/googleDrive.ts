import { GOOGLE_SCOPES } from '../oauth/providers/google.ts';
import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull } from '../runtime/lazyConnector.ts';
import { googleAuthHeaders, googleRateLimitDelay } from './google/shared.ts';
import { validateDriveConfig } from './googleDrive/config.ts';

/** Drive v3 (paths start with /drive/v3); `CNS_GOOGLE_DRIVE_API_URL` replaces it. */
export const GOOGLE_DRIVE_API_BASE = 'https://www.googleapis.com';

/**
 * The files of a Drive folder and its subfolders (spec 4.10), pulled only: Docs as Markdown,
 * Sheets as JSON rows, Slides and Drawings as PDF, other files as they are (see
 * googleDrive/kinds.ts); incremental through Drive's change feed.
 */
export const googleDriveConnector: PlatformConnector = {
  spec: {
    provider: 'google-drive',
    display_name: 'Google Drive',
    description:
      'The files of a Drive folder and its subfolders, at their folder paths: Google Docs as Markdown (<name>.md), Google Sheets as JSON rows of their first sheet keyed by the header row (<name>.json), Slides and Drawings as PDF, other Google types (Forms, Sites, shortcuts…) left out, every other file as it is (up to 64 MiB). With convert, PDFs and Word files become Markdown and Excel workbooks JSON rows. Renames and moves in Drive move the nodes; trashed files go to the trash. Read only.',
    auth: {
      type: 'oauth',
      description: 'Google OAuth (read-only access to Drive files); the folder must be visible to the connected account (own, shared with it, or in a shared drive it belongs to).',
      scopes: GOOGLE_SCOPES['google-drive']!,
      personal_token: false,
    },
    capabilities: { pull: true, push: { create: false, update: false, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the Drive folder\'s files are written to.' },
      { name: 'folder_id', type: 'string', required: true, description: 'Id of the Drive folder, or its address (https://drive.google.com/drive/folders/<id>).' },
      {
        name: 'convert',
        type: 'boolean',
        required: false,
        description: 'Convert PDFs and Word files to Markdown and Excel workbooks to JSON rows with the service\'s ingestion converters (default false: kept as files).',
      },
    ],
  },

  authHeaders: googleAuthHeaders,
  rateLimitDelay: googleRateLimitDelay,
  validateConfig: validateDriveConfig,
  pull: lazyPull(() => import('./googleDrive/pull.ts'), (m) => m.pullDrive),
};
