import test from 'ava';
import nock from 'nock';
import { gmailConnector } from '../../../src/platform/connectors/gmail.ts';
import type { SourceChange, SourceItem } from '../../../src/platform/runtime/connector.ts';
import { ProviderError } from '../../../src/platform/runtime/providerError.ts';
import { harness, pullAll, TOKEN } from './fixtures/github/connectorHarness.ts';
import { FakeGmail, GMAIL } from './fixtures/google/fakeGmail.ts';

// The Gmail connector over the runtime's real SourceHttp against a fake mailbox on nock
// (FakeGmail: Gmail API v1's wire format).

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const DAY = 86_400_000;
const T0 = Date.parse('2024-05-01T09:30:00.000Z');

const upserts = (changes: SourceChange[]) => Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, c.item]] : []))) as Record<string, SourceItem>;
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : [])).sort();
const fetched = (fake: FakeGmail) => fake.seen.filter((s) => /\/messages\/[^/]+$/.test(s.path)).map((s) => s.path.split('/').pop()!);

/** A receipts thread (a question and its reply), an HTML-only receipt with a PDF, a message outside the query. */
function mailbox() {
  const fake = new FakeGmail();
  const order = fake.add({
    from: 'Shop <orders@shop.example>',
    to: 'Ada Lovelace <ada.lovelace@example.com>',
    cc: 'Accounts <accounts@example.com>',
    subject: 'Your order #1234',
    at: T0,
    labels: ['INBOX', 'Label_1'],
    text: 'Thanks for your order.\r\n\r\n> Item: 1 × analytical engine\r\n',
    html: '<p>Thanks for your <b>order</b>.</p>',
  });
  const reply = fake.add({
    threadId: order,
    from: 'Ada Lovelace <ada.lovelace@example.com>',
    to: 'Shop <orders@shop.example>',
    subject: 'Re: Your order #1234',
    at: T0 + DAY,
    labels: ['SENT', 'Label_1'],
    text: 'When will it ship?',
  });
  const invoice = fake.add({
    from: 'Billing <billing@power.example>',
    to: 'ada.lovelace@example.com',
    subject: 'Invoice / May',
    at: T0 + 2 * DAY,
    labels: ['INBOX', 'UNREAD', 'Label_1'],
    html: '<html><body><h1>Invoice</h1><table><tr><td>Item</td><td>Price</td></tr><tr><td>Power</td><td>€ 12</td></tr></table><script>alert(1)</script><p>See the <a href="https://power.example/i/5">PDF</a>.</p></body></html>',
    attachments: [{ filename: 'invoice-may.pdf', mimeType: 'application/pdf', data: Buffer.from('%PDF-1.7 fake invoice bytes') }],
  });
  const other = fake.add({ from: 'Friend <friend@example.com>', to: 'ada.lovelace@example.com', subject: 'Lunch?', at: T0 + 3 * DAY, labels: ['INBOX'], text: 'Noon?' });
  fake.intercept();
  return { fake, order, reply, invoice, other };
}

const config = { path: 'mail', query: 'label:receipts' };

test.serial('first pull: each matching message as Markdown in a folder per thread, with its headers, labels by name and text; paged listing, Bearer token', async (t) => {
  const m = mailbox();
  m.fake.pageSize = 2; // the listing takes two pages
  const historyAtStart = m.fake.currentHistoryId;
  const h = harness(gmailConnector, GMAIL, config);
  const run = await pullAll(gmailConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Invoice May/2024-05-03 Invoice May.md', 'Your order #1234/2024-05-01 Your order #1234.md', 'Your order #1234/2024-05-02 Re: Your order #1234.md']);
  t.deepEqual(deletes(run.changes), []);

  const first = items['Your order #1234/2024-05-01 Your order #1234.md']!;
  t.is(first.sourceId, m.order);
  t.is(first.type, 'markdown');
  t.is(
    first.content,
    [
      '---',
      'from: "Shop <orders@shop.example>"',
      'to: "Ada Lovelace <ada.lovelace@example.com>"',
      'cc: "Accounts <accounts@example.com>"',
      'subject: "Your order #1234"',
      'date: 2024-05-01T09:30:00.000Z',
      'labels: ["INBOX", "Receipts"]',
      `message_id: "<CAF${m.order}@mail.gmail.com>"`,
      `gmail_id: "${m.order}"`,
      `thread_id: "${m.order}"`,
      'attachments: []',
      '---',
      // The plain-text alternative wins over the HTML one, as written.
      'Thanks for your order.',
      '',
      '> Item: 1 × analytical engine',
      '',
    ].join('\n'),
  );
  t.deepEqual(first.meta, { kind: 'message', thread: m.order, folder: 'Your order #1234' });
  const reply = items['Your order #1234/2024-05-02 Re: Your order #1234.md']!;
  t.regex(String(reply.content), /labels: \["SENT", "Receipts"\]/);
  t.regex(String(reply.content), new RegExp(`thread_id: "${m.order}"`));

  // HTML only: converted, scripts dropped, the table kept; the attachment listed, not stored.
  const invoice = String(items['Invoice May/2024-05-03 Invoice May.md']!.content);
  t.regex(invoice, /^# Invoice$/m);
  t.regex(invoice, /\| Item \| Price \|\n\| --- \| --- \|\n\| Power \| € 12 \|/);
  t.regex(invoice, /See the \[PDF\]\(https:\/\/power\.example\/i\/5\)\./);
  t.false(invoice.includes('alert'));
  t.regex(invoice, /attachments: \["invoice-may\.pdf"\]/);
  t.regex(invoice, /## Attachments\n\n- invoice-may\.pdf \(application\/pdf, 27 B\)\n$/);
  t.regex(invoice, /labels: \["INBOX", "UNREAD", "Receipts"\]/);

  // What was asked: the history id first, labels, the search (two pages), then each message in full, oldest first.
  t.deepEqual(m.fake.calls().slice(0, 4), ['GET /gmail/v1/users/me/profile', 'GET /gmail/v1/users/me/labels', 'GET /gmail/v1/users/me/messages', 'GET /gmail/v1/users/me/messages']);
  const listing = m.fake.seen.filter((s) => s.path.endsWith('/messages'));
  t.deepEqual(listing.map((s) => s.query.q), [['label:receipts'], ['label:receipts']]);
  t.deepEqual(listing[1]!.query.pageToken, ['2']);
  t.deepEqual(fetched(m.fake), [m.order, m.reply, m.invoice]);
  t.true(m.fake.seen.filter((s) => /\/messages\/[^/]+$/.test(s.path)).every((s) => s.query.format?.[0] === 'full'));
  t.false(fetched(m.fake).includes(m.other), 'a message outside the search is never fetched');
  t.true(m.fake.seen.every((s) => s.headers.authorization === `Bearer ${TOKEN}`));
  t.is(h.counters.httpCalls, m.fake.seen.length);
  t.like(JSON.parse(run.cursor!), { v: 1, historyId: historyAtStart, query: 'label:receipts', attachments: false });
});

test.serial('attachments: stored as files beside the message and linked from it; not downloaded again on later runs', async (t) => {
  const m = mailbox();
  const h = harness(gmailConnector, GMAIL, { ...config, attachments: true });
  const run = await pullAll(gmailConnector, h, null);
  const items = upserts(run.changes);
  const file = items['Invoice May/2024-05-03 Invoice May/invoice-may.pdf']!;
  t.truthy(file);
  t.is(file.type, 'file');
  t.is(file.sourceId, `${m.invoice}/1`);
  t.deepEqual(file.content, Buffer.from('%PDF-1.7 fake invoice bytes'));
  t.deepEqual(file.meta, { kind: 'attachment', message: m.invoice });
  t.regex(String(items['Invoice May/2024-05-03 Invoice May.md']!.content), /- \[invoice-may\.pdf\]\(<2024-05-03 Invoice May\/invoice-may\.pdf>\) \(application\/pdf, 27 B\)/);
  t.is(m.fake.seen.filter((s) => s.path.includes('/attachments/')).length, 1);

  // A label change on the invoice: the message is fetched again, its attachment is not.
  m.fake.label(m.invoice, 'Label_2');
  m.fake.seen.length = 0;
  const next = await pullAll(gmailConnector, h, run.cursor);
  t.deepEqual(fetched(m.fake), [m.invoice]);
  t.is(m.fake.seen.filter((s) => s.path.includes('/attachments/')).length, 0);
  t.deepEqual(Object.keys(upserts(next.changes)), ['Invoice May/2024-05-03 Invoice May.md']);
  t.regex(String(upserts(next.changes)['Invoice May/2024-05-03 Invoice May.md']!.content), /labels: \["INBOX", "UNREAD", "Receipts", "Travel"\]/);

  // Attachments turned off: the files go, the message is written again (listed, not linked).
  const off = harness(gmailConnector, GMAIL, config, h.known);
  const after = await pullAll(gmailConnector, off, next.cursor);
  t.deepEqual(deletes(after.changes), [`${m.invoice}/1`]);
  t.regex(String(upserts(after.changes)['Invoice May/2024-05-03 Invoice May.md']!.content), /- invoice-may\.pdf \(application\/pdf/);
  t.false(h.known.items.has(`${m.invoice}/1`));
});

test.serial('incremental: the history since the cursor says which known messages changed; new matches are fetched, others never', async (t) => {
  const m = mailbox();
  const h = harness(gmailConnector, GMAIL, config);
  const first = await pullAll(gmailConnector, h, null);
  const invoiceVersion = h.known.items.get(m.invoice)!.sourceVersion;

  const late = m.fake.add({ threadId: m.order, from: 'Shop <orders@shop.example>', to: 'ada.lovelace@example.com', subject: 'Re: Your order #1234', at: T0 + 4 * DAY, labels: ['INBOX', 'Label_1'], text: 'Shipped today.' });
  m.fake.add({ from: 'News <news@example.com>', to: 'ada.lovelace@example.com', subject: 'Weekly news', at: T0 + 4 * DAY, labels: ['INBOX'], text: 'Hello' });
  m.fake.unlabel(m.invoice, 'UNREAD');
  m.fake.seen.length = 0;
  const run = await pullAll(gmailConnector, h, first.cursor);

  t.deepEqual(m.fake.calls().slice(0, 3), ['GET /gmail/v1/users/me/history', 'GET /gmail/v1/users/me/labels', 'GET /gmail/v1/users/me/messages']);
  const history = m.fake.seen[0]!;
  t.deepEqual(history.query.startHistoryId, [JSON.parse(first.cursor!).historyId]);
  t.deepEqual(history.query.historyTypes, ['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved']);
  t.deepEqual(fetched(m.fake).sort(), [late, m.invoice].sort(), 'only the new match and the relabelled message');
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Invoice May/2024-05-03 Invoice May.md', 'Your order #1234/2024-05-05 Re: Your order #1234.md']);
  t.regex(String(items['Invoice May/2024-05-03 Invoice May.md']!.content), /labels: \["INBOX", "Receipts"\]/);
  t.not(items['Invoice May/2024-05-03 Invoice May.md']!.sourceVersion, invoiceVersion, 'a label change is a new version');
  t.is(JSON.parse(run.cursor!).historyId, m.fake.currentHistoryId);
  t.deepEqual(deletes(run.changes), []);
});

test.serial('deletion: a message deleted, or that no longer matches the search (label removed, trashed), is deleted here with its attachments', async (t) => {
  const m = mailbox();
  const h = harness(gmailConnector, GMAIL, { ...config, attachments: true });
  const first = await pullAll(gmailConnector, h, null);
  t.is(h.known.size, 4);

  m.fake.remove(m.reply);
  m.fake.unlabel(m.invoice, 'Label_1');
  m.fake.seen.length = 0;
  const run = await pullAll(gmailConnector, h, first.cursor);
  t.deepEqual(deletes(run.changes), [m.invoice, `${m.invoice}/1`, m.reply].sort());
  t.deepEqual(fetched(m.fake), [], 'nothing to fetch: the listing says what left');
  t.deepEqual([...h.known.items.keys()], [m.order]);

  m.fake.label(m.order, 'TRASH');
  const trashed = await pullAll(gmailConnector, h, run.cursor);
  t.deepEqual(deletes(trashed.changes), [m.order]);
  t.is(h.known.size, 0);
});

test.serial('a quiet mailbox costs one call; a history id that moved without records of ours is kept', async (t) => {
  const m = mailbox();
  const h = harness(gmailConnector, GMAIL, config);
  const first = await pullAll(gmailConnector, h, null);
  m.fake.seen.length = 0;
  const quiet = await pullAll(gmailConnector, h, first.cursor);
  t.deepEqual(m.fake.calls(), ['GET /gmail/v1/users/me/history']);
  t.is(quiet.pages.length, 0);
  t.is(quiet.cursor, first.cursor);

  m.fake.unrelatedChange();
  m.fake.seen.length = 0;
  const moved = await pullAll(gmailConnector, h, first.cursor);
  t.deepEqual(m.fake.calls(), ['GET /gmail/v1/users/me/history']);
  t.deepEqual(moved.changes, []);
  t.is(JSON.parse(moved.cursor!).historyId, m.fake.currentHistoryId);
});

test.serial('an expired history id (404) is a full re-sync with the same source ids: no duplicates, removals found', async (t) => {
  const m = mailbox();
  const h = harness(gmailConnector, GMAIL, config);
  const first = await pullAll(gmailConnector, h, null);
  const before = new Map([...h.known.items].map(([id, k]) => [id, k.path]));

  m.fake.remove(m.reply);
  const late = m.fake.add({ from: 'Shop <orders@shop.example>', to: 'ada.lovelace@example.com', subject: 'Receipt 99', at: T0 + 5 * DAY, labels: ['Label_1'], text: 'Paid.' });
  m.fake.expireHistory();
  m.fake.seen.length = 0;
  const run = await pullAll(gmailConnector, h, first.cursor);

  t.deepEqual(m.fake.calls().slice(0, 4), ['GET /gmail/v1/users/me/history', 'GET /gmail/v1/users/me/profile', 'GET /gmail/v1/users/me/labels', 'GET /gmail/v1/users/me/messages']);
  t.deepEqual(fetched(m.fake).sort(), [m.order, m.invoice, late].sort(), 'every match fetched again');
  t.deepEqual(deletes(run.changes), [m.reply]);
  const ids = run.changes.flatMap((c) => (c.kind === 'upsert' ? [c.item.sourceId] : []));
  t.deepEqual(ids.sort(), [m.order, m.invoice, late].sort());
  // The known messages keep their ids and paths: the runtime updates their nodes in place.
  for (const id of [m.order, m.invoice]) t.is(h.known.items.get(id)!.path, before.get(id)!);
  t.is(h.known.size, 3);
  t.is(JSON.parse(run.cursor!).historyId, m.fake.currentHistoryId);
});

test.serial('another query is a full re-sync: what the new one does not match is deleted', async (t) => {
  const m = mailbox();
  const h = harness(gmailConnector, GMAIL, config);
  const first = await pullAll(gmailConnector, h, null);
  m.fake.seen.length = 0;
  const other = harness(gmailConnector, GMAIL, { ...config, query: 'label:receipts from:shop' }, h.known);
  const run = await pullAll(gmailConnector, other, first.cursor);
  t.false(m.fake.calls().includes('GET /gmail/v1/users/me/history'), 'the old history says nothing of the new query');
  // From: holds "shop" only in the shop's own message; Ada's reply and the power bill go.
  t.deepEqual(deletes(run.changes), [m.invoice, m.reply].sort());
  t.deepEqual([...h.known.items.keys()], [m.order]);
  t.is(JSON.parse(run.cursor!).query, 'label:receipts from:shop');
});

test.serial('rate limits: 429 with Retry-After and 403 userRateLimitExceeded wait as Google asks; another 403 fails with Google\'s words', async (t) => {
  const m = mailbox();
  m.fake.interrupts.push(
    { path: /\/messages$/, status: 429, headers: { 'retry-after': '7' }, body: { error: { code: 429, message: 'Too many concurrent requests for user.', errors: [{ message: 'Too many concurrent requests for user.', domain: 'global', reason: 'rateLimitExceeded' }], status: 'RESOURCE_EXHAUSTED' } } },
    { path: /\/messages\/[^/]+$/, status: 403, headers: {}, body: { error: { code: 403, message: 'User-rate limit exceeded.', errors: [{ message: 'User-rate limit exceeded.', domain: 'usageLimits', reason: 'userRateLimitExceeded' }], status: 'PERMISSION_DENIED' } } },
  );
  const h = harness(gmailConnector, GMAIL, config);
  const run = await pullAll(gmailConnector, h, null);
  t.is(Object.keys(upserts(run.changes)).length, 3);
  t.deepEqual(h.sleeps, [7_000, 2_000]);
  t.is(h.counters.rateLimitedMs, 9_000);

  m.fake.interrupts.push({ path: /\/history$/, status: 403, headers: {}, body: { error: { code: 403, message: 'Request had insufficient authentication scopes.', errors: [{ message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' }], status: 'PERMISSION_DENIED' } } });
  const err = await t.throwsAsync(pullAll(gmailConnector, harness(gmailConnector, GMAIL, config, h.known), run.cursor), { instanceOf: ProviderError });
  t.regex(err!.message, /gmail answered 403: Request had insufficient authentication scopes\./);
});

test.serial('text in the charset its part names; a subject with slashes stays one name; reply prefixes do not name threads', async (t) => {
  const fake = new FakeGmail();
  const id = fake.add({ from: 'Zoë <zoe@example.fr>', to: 'ada.lovelace@example.com', subject: 'AW: Re: Café ../menu', at: T0, labels: ['Label_1'], text: 'Crème brûlée à 5 francs.', charset: 'iso-8859-1' });
  const dup = fake.add({ from: 'Other <o@example.com>', to: 'ada.lovelace@example.com', subject: 'Café ../menu', at: T0 + DAY, labels: ['Label_1'], text: 'A second thread of that name.' });
  fake.intercept();
  const h = harness(gmailConnector, GMAIL, config);
  const run = await pullAll(gmailConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), [`Café .. menu (${dup})/2024-05-02 Café .. menu.md`, 'Café .. menu/2024-05-01 AW: Re: Café .. menu.md']);
  t.regex(String(items['Café .. menu/2024-05-01 AW: Re: Café .. menu.md']!.content), /Crème brûlée à 5 francs\./);
  t.is(items['Café .. menu/2024-05-01 AW: Re: Café .. menu.md']!.sourceId, id);
});

test.serial('a large pull is committed in pages of 50 messages; pages before the last keep the cursor the run started from', async (t) => {
  const fake = new FakeGmail();
  for (let i = 0; i < 55; i++) fake.add({ from: 'Shop <orders@shop.example>', to: 'ada.lovelace@example.com', subject: `Receipt ${i}`, at: T0 + i * 60_000, labels: ['Label_1'], text: `Receipt number ${i}.` });
  fake.intercept();
  const h = harness(gmailConnector, GMAIL, config);
  const run = await pullAll(gmailConnector, h, null);
  t.deepEqual(run.pages.map((p) => p.changes.length), [50, 5]);
  t.is(run.pages[0]!.cursor, null, 'a run cut short after the first page starts over');
  t.like(JSON.parse(run.pages[1]!.cursor!), { historyId: fake.currentHistoryId });
  t.is(h.known.size, 55);
});

test.serial('config: the query is required and checked', (t) => {
  t.throws(() => gmailConnector.validateConfig!({ path: 'mail', query: '  ' }), { message: /query is a Gmail search/ });
  t.throws(() => gmailConnector.validateConfig!({ path: 'mail', query: 'x'.repeat(1001) }), { message: /at most 1000/ });
  t.notThrows(() => gmailConnector.validateConfig!({ path: 'mail', query: 'label:receipts', attachments: 'true' }));
  t.deepEqual(gmailConnector.spec.auth.scopes, ['https://www.googleapis.com/auth/gmail.readonly']);
  t.deepEqual(gmailConnector.spec.directions, ['pull']);
});
