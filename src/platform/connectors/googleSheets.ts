import { GOOGLE_SCOPES } from '../oauth/providers/google.ts';
import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull, lazyPush } from '../runtime/lazyConnector.ts';
import { googleAuthHeaders, googleRateLimitDelay } from './google/shared.ts';
import { validateSheetsConfig } from './googleSheets/config.ts';

export { SHEETS_API_BASE } from './googleSheets/api.ts';

/**
 * Ranges of a Google spreadsheet (spec 4.10): one JSON node per row, keyed by the header row,
 * at `<sheet>/<key or row number>.json`. One node per row rather than per range, so an edit here
 * writes only that row's changed cells, and a conflict concerns one row.
 */
export const googleSheetsConnector: PlatformConnector = {
  spec: {
    provider: 'google-sheets',
    display_name: 'Google Sheets',
    description:
      'Ranges of a spreadsheet (the first sheet unless ranges are given): one JSON node per row keyed by the header row (<sheet>/<key>.json with key_column, else <sheet>/<row number>.json), numbers and booleans typed, dates as the sheet shows them. Edited cells go back to the sheet as if typed there; new row nodes are appended; a deleted row node clears the row when push_deletes is on.',
    auth: {
      type: 'oauth',
      description:
        'Google OAuth (read and write spreadsheets; reading the file\'s Drive version, which tells an unchanged spreadsheet in one call, needs Drive metadata access, without which every run reads the ranges).',
      scopes: GOOGLE_SCOPES['google-sheets']!,
      personal_token: false,
    },
    capabilities: { pull: true, push: { create: true, update: true, delete: true }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the rows are written to (one folder per sheet).' },
      { name: 'spreadsheet_id', type: 'string', required: true, description: 'Id of the spreadsheet, or its address (https://docs.google.com/spreadsheets/d/<id>/edit).' },
      { name: 'ranges', type: 'string_list', required: false, description: 'A1 ranges or sheet names to sync (Tasks, Tasks!A1:F, \'My sheet\'!B2:D); the first row of each is its header row. Default: the first sheet.' },
      { name: 'key_column', type: 'string', required: false, description: 'Heading whose values name and identify rows (stable when rows are sorted or inserted); default: the row number.' },
      { name: 'push_deletes', type: 'boolean', required: false, description: 'A row node deleted here clears the row in the sheet (default false: refused).' },
    ],
  },

  authHeaders: googleAuthHeaders,
  rateLimitDelay: googleRateLimitDelay,
  validateConfig: validateSheetsConfig,
  pull: lazyPull(() => import('./googleSheets/pull.ts'), (m) => m.pullSheets),
  push: lazyPush(() => import('./googleSheets/push.ts'), (m) => m.pushSheets),
};
