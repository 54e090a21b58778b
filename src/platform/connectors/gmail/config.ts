import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

export interface GmailConfig {
  /** A Gmail search, as typed in Gmail's search box (`label:receipts newer_than:90d`). */
  query: string;
  /** Store attachments as file nodes beside their message. */
  attachments: boolean;
}

/** Gmail refuses longer searches; a sync's query has no reason to come near it. */
const MAX_QUERY_CHARS = 1_000;

export function gmailConfig(config: SyncConfig): GmailConfig {
  return {
    query: typeof config.query === 'string' ? config.query.trim() : '',
    attachments: config.attachments === true || config.attachments === 'true',
  };
}

export function validateGmailConfig(config: SyncConfig): void {
  const c = gmailConfig(config);
  if (c.query === '') throw invalidField('query', 'query is a Gmail search, such as "label:receipts" or "from:billing@example.com newer_than:1y"');
  if (c.query.length > MAX_QUERY_CHARS) throw invalidField('query', `query is at most ${MAX_QUERY_CHARS} characters`);
}
