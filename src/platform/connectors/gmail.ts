import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull } from '../runtime/lazyConnector.ts';
import { GOOGLE_SCOPES } from '../oauth/providers/google.ts';
import { googleAuthHeaders, googleRateLimitDelay } from './google/shared.ts';
import { validateGmailConfig } from './gmail/config.ts';

export { GMAIL_API_BASE } from './gmail/api.ts';

/**
 * Gmail messages matching a search, as Markdown in a folder per thread (spec 4.7), pull only
 * (read-only scope). Quota answers (429, 403 rateLimitExceeded) wait as Google asks.
 */
export const gmailConnector: PlatformConnector = {
  spec: {
    provider: 'gmail',
    display_name: 'Gmail',
    description:
      'Messages matching a Gmail search, one Markdown node each (front matter: from, to, cc, subject, date, labels, ids; the text, HTML converted; attachments listed) at <thread subject>/<date> <subject>.md; attachments optionally stored beside it. Incremental through the mailbox history; messages that stop matching are removed.',
    auth: {
      type: 'oauth',
      description: 'Google OAuth (read-only Gmail access, and the account\'s email address to name the connection).',
      scopes: GOOGLE_SCOPES.gmail,
      personal_token: false,
    },
    capabilities: { pull: true, push: { create: false, update: false, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the messages are written to (one folder per thread).' },
      { name: 'query', type: 'string', required: true, description: 'A Gmail search, as in Gmail\'s search box: "label:receipts", "from:billing@example.com newer_than:1y". Spam and trash are left out.' },
      { name: 'attachments', type: 'boolean', required: false, description: 'Store attachments as files beside their message, in a folder named like it (default false: only listed).' },
    ],
  },

  authHeaders: googleAuthHeaders,
  rateLimitDelay: googleRateLimitDelay,
  validateConfig: validateGmailConfig,
  pull: lazyPull(() => import('./gmail/pull.ts'), (m) => m.pullGmail),
};
