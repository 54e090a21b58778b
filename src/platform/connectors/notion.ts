import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull, lazyPush } from '../runtime/lazyConnector.ts';
import { NOTION_VERSION } from './notion/api.ts';
import { validateNotionConfig } from './notion/config.ts';

export { NOTION_API_BASE } from './notion/api.ts';

/**
 * Notion pages under a chosen page as Markdown, and database rows as JSON keyed by property
 * name (spec 4.7). Rate limits are 429 + `Retry-After`, which the runtime honours itself.
 */
export const notionConnector: PlatformConnector = {
  spec: {
    provider: 'notion',
    display_name: 'Notion',
    description:
      'Pages under a chosen Notion page as Markdown (<page>.md, sub-pages in the folder <page>/), and rows of chosen databases as JSON keyed by property name (<database>/<row>.json). Edits of a page\'s Markdown replace its blocks; edits of a row update its properties.',
    auth: {
      type: 'oauth',
      description: 'OAuth (a public integration), or an internal integration secret; share the pages and databases with the integration in Notion (••• → Connections).',
      scopes: [],
      personal_token: true,
    },
    capabilities: { pull: true, push: { create: false, update: true, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the pages and rows are written to.' },
      { name: 'root_page_id', type: 'string', required: false, description: 'Id (or address) of the page whose sub-pages are synced, with itself.' },
      { name: 'database_ids', type: 'string_list', required: false, description: 'Ids (or addresses) of databases whose rows are synced as JSON.' },
      {
        name: 'reconcile_minutes',
        type: 'integer',
        required: false,
        description: 'Minutes between full listings that find pages and rows deleted or unshared in Notion (default 60; 0: every run).',
      },
    ],
  },

  authHeaders: (credential) => ({ authorization: `Bearer ${credential.accessToken}`, 'notion-version': NOTION_VERSION }),
  validateConfig: validateNotionConfig,
  pull: lazyPull(() => import('./notion/pull.ts'), (m) => m.pullNotion),
  push: lazyPush(() => import('./notion/push.ts'), (m) => m.pushNotion),
};
