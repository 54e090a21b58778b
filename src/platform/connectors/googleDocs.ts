import { GOOGLE_SCOPES } from '../oauth/providers/google.ts';
import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull, lazyPush } from '../runtime/lazyConnector.ts';
import { googleAuthHeaders, googleRateLimitDelay } from './google/shared.ts';
import { validateGoogleDocsConfig } from './googleDocs/config.ts';

export { DOCS_API_BASE, DRIVE_API_BASE } from './googleDocs/api.ts';

/**
 * Chosen Google documents as Markdown, one node each (`<title>.md`), spec 4.10. An unchanged
 * document costs one Drive metadata call per run; a changed one is read again whole. With
 * `push` on, an edit of the Markdown goes back as the smallest batchUpdate of the paragraphs
 * that changed, refused (and reported) when Google's copy moved meanwhile or when the edit
 * touches what Markdown cannot write back faithfully.
 */
export const googleDocsConnector: PlatformConnector = {
  spec: {
    provider: 'google-docs',
    display_name: 'Google Docs',
    description:
      'Chosen documents as Markdown (<title>.md): headings (a title as #, a subtitle as ##), paragraphs with bold, italic, strikethrough and links, nested bulleted and numbered lists, tables, images (links to Google\'s image address, valid about 30 minutes), horizontal rules and footnotes. With push on, edits of paragraphs, headings and list items go back as a minimal batchUpdate; edits of tables, images, rules and footnotes, new or deleted documents and renames are refused (do them in Google Docs). A renamed document moves its node; a deleted or unshared one is deleted here.',
    auth: {
      type: 'oauth',
      description:
        'Google OAuth: Docs access to read the documents (and write them when push is on), and Drive metadata access to read a document\'s version, which tells an unchanged document without reading it.',
      scopes: GOOGLE_SCOPES['google-docs']!,
      personal_token: false,
    },
    capabilities: { pull: true, push: { create: false, update: true, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the documents are written to.' },
      { name: 'document_ids', type: 'string_list', required: true, description: 'The documents to sync: ids or addresses (https://docs.google.com/document/d/<id>/edit).' },
      { name: 'push', type: 'boolean', required: false, description: 'Send edits of the Markdown back to the documents (default false: refused, and reported in the run).' },
    ],
  },

  authHeaders: googleAuthHeaders,
  rateLimitDelay: googleRateLimitDelay,
  validateConfig: validateGoogleDocsConfig,
  pull: lazyPull(() => import('./googleDocs/pull.ts'), (m) => m.pullGoogleDocs),
  push: lazyPush(() => import('./googleDocs/push.ts'), (m) => m.pushGoogleDocs),
};
