import type { SourceHttp } from '../../runtime/connector.ts';
import { googlePages } from '../google/shared.ts';

/** The Gmail API's public address (paths start with /gmail/v1); `CNS_GMAIL_API_URL` replaces it. */
export const GMAIL_API_BASE = 'https://gmail.googleapis.com';

const ME = '/gmail/v1/users/me';

export interface GmailHeader {
  name: string;
  value: string;
}

/** A MIME part of a message (`payload` is the top one), as users.messages.get `format=full` gives it. */
export interface GmailPart {
  partId?: string;
  mimeType?: string;
  filename?: string;
  headers?: GmailHeader[];
  /** `data` is base64url of the part's decoded bytes; large bodies come as `attachmentId` instead. */
  body?: { attachmentId?: string; size?: number; data?: string };
  parts?: GmailPart[];
}

export interface GmailMessage {
  id: string;
  threadId: string;
  labelIds?: string[];
  snippet?: string;
  /** The last history record that changed the message (a label change raises it). */
  historyId: string;
  /** When Gmail accepted the message, epoch milliseconds as a string. */
  internalDate: string;
  payload?: GmailPart;
}

/** What changed in the mailbox since a history id. */
export interface MailboxHistory {
  /** The mailbox's current history id: the next run starts from it. */
  historyId: string;
  /** Messages added, deleted, or whose labels changed. */
  touched: Set<string>;
  /** History records read (0: nothing happened in the mailbox). */
  records: number;
}

interface HistoryRecord {
  id: string;
  messages?: { id: string }[];
  messagesAdded?: { message: { id: string } }[];
  messagesDeleted?: { message: { id: string } }[];
  labelsAdded?: { message: { id: string } }[];
  labelsRemoved?: { message: { id: string } }[];
}

/** Gmail's largest page of message ids and of history records. */
const PAGE_SIZE = 500;

/** The calls the Gmail connector makes, on the authenticated user's mailbox (`me`). */
export class GmailApi {
  constructor(private readonly http: SourceHttp) {}

  /** The mailbox's current history id (taken before a full listing, so nothing done meanwhile is missed). */
  async historyId(): Promise<string> {
    const res = await this.http.request({ url: `${ME}/profile` });
    return String(res.json<{ historyId: string | number }>().historyId);
  }

  /** Label names by id (user labels have ids such as `Label_12`; system labels are their own names). */
  async labels(): Promise<Map<string, string>> {
    const res = await this.http.request({ url: `${ME}/labels` });
    const labels = res.json<{ labels?: { id: string; name: string }[] }>().labels ?? [];
    return new Map(labels.map((l) => [l.id, l.name]));
  }

  /** Ids (with thread ids) of the messages the search matches, spam and trash left out as in Gmail. */
  async matching(query: string): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    const pages = googlePages<{ id: string; threadId: string }>(
      (pageToken) => this.http.request({ url: `${ME}/messages`, query: { q: query, maxResults: PAGE_SIZE, pageToken } }),
      'messages',
    );
    for await (const { items } of pages) for (const m of items) ids.set(m.id, m.threadId);
    return ids;
  }

  /**
   * The mailbox's changes after `startHistoryId`, every page; null when Gmail no longer has
   * history that old (404: a history id is kept about a week), which calls for a full sync.
   */
  async history(startHistoryId: string): Promise<MailboxHistory | null> {
    const touched = new Set<string>();
    let records = 0;
    let historyId = startHistoryId;
    let pageToken: string | undefined;
    do {
      // `historyTypes` repeats, which the query record cannot say: it is written into the URL.
      const res = await this.http.request({
        url: `${ME}/history?historyTypes=messageAdded&historyTypes=messageDeleted&historyTypes=labelAdded&historyTypes=labelRemoved`,
        query: { startHistoryId, maxResults: PAGE_SIZE, pageToken },
        accept: [404],
      });
      if (res.status === 404) return null;
      const body = res.json<{ history?: HistoryRecord[]; historyId: string | number; nextPageToken?: string }>();
      for (const h of body.history ?? []) {
        records++;
        for (const m of h.messages ?? []) touched.add(m.id);
        for (const list of [h.messagesAdded, h.messagesDeleted, h.labelsAdded, h.labelsRemoved]) for (const e of list ?? []) touched.add(e.message.id);
      }
      historyId = String(body.historyId);
      pageToken = body.nextPageToken || undefined;
    } while (pageToken);
    return { historyId, touched, records };
  }

  /** The whole message (headers, MIME parts, inline bodies); null when it is gone (deleted meanwhile). */
  async message(id: string): Promise<GmailMessage | null> {
    const res = await this.http.request({ url: `${ME}/messages/${encodeURIComponent(id)}`, query: { format: 'full' }, accept: [404] });
    return res.status === 404 ? null : res.json<GmailMessage>();
  }

  /** An attachment's bytes (its id is only good for the message fetched just before: Gmail issues new ones). */
  async attachment(messageId: string, attachmentId: string): Promise<Buffer> {
    const res = await this.http.request({ url: `${ME}/messages/${encodeURIComponent(messageId)}/attachments/${encodeURIComponent(attachmentId)}` });
    return Buffer.from(res.json<{ data?: string }>().data ?? '', 'base64url');
  }
}
