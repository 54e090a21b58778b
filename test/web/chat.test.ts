import anyTest, { type TestFn } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAi, type FakeProvider } from '../agents/fakeProviders.ts';
import { freshPageEachTest, launchBrowser, type PageContext } from '../helpers/browser.ts';
import { clickHeaderAction, openNewProject } from '../helpers/dashboard.ts';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * The dashboard's chat with an agent, in headless chromium. The LLM provider is a local server
 * speaking OpenAI's streaming wire format (test/agents/fakeProviders.ts), reached by the real SDK
 * through `CNS_OPENAI_BASE_URL`; each test scripts the model's replies. The tests share that
 * fake, so they run one at a time.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let browser: Browser;
let fake: FakeProvider;
let admin: { token: string };
let orgId: string;

test.before(async () => {
  fake = await startFakeOpenAi();
  [server, browser] = await Promise.all([
    startTestServer({}, { CNS_OPENAI_BASE_URL: fake.url, CNS_OPENAI_API_KEY: 'sk-test-openai' }),
    launchBrowser(),
  ]);
  admin = await server.login();
  orgId = (await defaultProject(server, admin.token)).orgId;
});
test.after.always(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.close();
});

freshPageEachTest(test, () => browser);

const write = (projectId: string, body: Record<string, unknown>) => server.api('POST', `/content/${projectId}/write`, { token: admin.token, body });
const cat = async (projectId: string, path: string) =>
  (await server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token: admin.token })).body.data;

/** Polls `check` until it returns a value, or fails at the deadline. */
async function eventually<T>(check: () => Promise<T | undefined>, what: string, deadlineMs = 10_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A settable promise: the fake holds part of a reply until it settles. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Buttons, fields and lists of choices without a name a screen reader can read. */
const unnamedControls = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('button, input, select, textarea')]
    .filter((el) => !el.getAttribute('aria-label') && !el.getAttribute('title') && !el.closest('label') && !(el.textContent ?? '').trim())
    .map((el) => el.outerHTML)`);

/** Opens the chat panel and waits for the agent list (the project's default agent is made on first use). */
async function openChat(page: Page) {
  await clickHeaderAction(page, 'Chat');
  const chat = page.getByRole('region', { name: 'Chat' });
  await chat.getByRole('combobox').waitFor();
  return chat;
}

const send = async (chat: ReturnType<Page['getByRole']>, message: string) => {
  await chat.getByLabel('Message', { exact: true }).fill(message);
  await chat.getByRole('button', { name: 'Send' }).click();
};

test.serial('a turn streams in as it arrives; the write shows as a collapsed tool call, its version links to its diff, and follow-ups continue the session', async (t) => {
  const { page } = t.context;
  const projectId = await openNewProject(server, page, admin.token, orgId, 'Chat project');
  await write(projectId, { path: 'notes.md', node_type: 'markdown', content: 'alpha\n' });
  const chat = await openChat(page);
  t.regex((await chat.getByRole('combobox').locator('option:checked').textContent()) ?? '', /^default \(openai:gpt-4\.1-mini\)$/);

  const hold = gate();
  const start = fake.requests.length;
  fake.script(
    { text: ['I will add it. '], toolCalls: [{ name: 'write', arguments: { path: 'notes.md', content: 'alpha\nbeta\n', message: 'add beta' } }] },
    { text: ['Added ', '**beta** ', 'to notes.md.'], pauseAfter: 1, resume: hold.promise },
  );
  const bodies: Record<string, unknown>[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/api/v1/agents')) bodies.push(r.postDataJSON());
  });
  await send(chat, 'Add beta to notes.md');

  // The first piece of the second reply is on screen while the rest is held back by the fake.
  const turn = chat.getByRole('article');
  await turn.getByText('Added', { exact: true }).waitFor();
  t.is(await turn.getAttribute('aria-busy'), 'true', 'the turn is still streaming');
  t.true(await chat.getByRole('button', { name: 'Stop' }).isVisible());
  t.false(await turn.getByText('to notes.md.').isVisible());
  hold.open();
  await turn.getByText('Added beta to notes.md.').waitFor();
  t.is(await turn.locator('.answer strong').textContent(), 'beta', 'the answer is rendered as Markdown');
  await chat.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });

  // The tool call folds away; opened, it shows its arguments and its result.
  const call = turn.locator('details.tool');
  t.is(await call.count(), 1);
  t.false(await call.evaluate((d) => (d as unknown as { open: boolean }).open), 'collapsed at first');
  await call.getByText('Tool write notes.md: done').click();
  t.regex((await call.getByLabel('Arguments of write').textContent()) ?? '', /"content": "alpha\\nbeta\\n"/);
  t.regex((await call.getByLabel('Result of write').textContent()) ?? '', /"version": 2/);
  t.deepEqual(await unnamedControls(page), []);

  // The content was written, as a version by the agent.
  t.is((await cat(projectId, 'notes.md')).content, 'alpha\nbeta\n');
  const versions = (await server.api('GET', `/content/${projectId}/versions?path=notes.md`, { token: admin.token })).body.data.versions;
  t.like(versions[0], { version: 2, actor_type: 'agent', message: 'add beta' });

  // The version it wrote links to the diff against the version before.
  const link = turn.getByRole('list', { name: 'Versions written' }).getByRole('button', { name: 'notes.md version 2' });
  await link.click();
  t.is(await link.getAttribute('aria-expanded'), 'true');
  const diff = turn.getByRole('figure', { name: 'Changes from version 1 to version 2' });
  await diff.waitFor();
  t.deepEqual(await diff.locator('.add').allTextContents(), ['+beta']);
  await turn.getByRole('button', { name: 'Open notes.md in the tree' }).click();
  await page.getByRole('heading', { name: 'notes.md', level: 2 }).waitFor();
  t.true(await chat.isVisible(), 'the chat stays open above the node');

  // A follow-up continues the session: the model is sent the first exchange again.
  fake.script({ text: ['It has two lines.'] });
  await send(chat, 'How many lines now?');
  await chat.getByText('It has two lines.').waitFor();
  t.is(bodies.length, 2);
  t.is(bodies[0]!.session_id, undefined);
  t.regex(String(bodies[1]!.session_id), /^chat_/);
  const third = fake.requests[start + 2]!.body;
  const said = third.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content);
  t.deepEqual(said, ['Add beta to notes.md', 'How many lines now?']);

  // The address names the conversation: a reload shows it again as stored, tool call and versions included.
  t.regex(new URL(page.url()).pathname, new RegExp(`^/projects/${projectId}/chat/chat_`));
  await page.reload();
  const restored = page.getByRole('region', { name: 'Chat' });
  await restored.getByText('It has two lines.').waitFor();
  t.is(await restored.getByRole('article').count(), 2);
  await restored.getByText('Tool write notes.md: done').waitFor();
  await restored.getByRole('button', { name: 'notes.md version 2' }).waitFor();
  await page.getByRole('heading', { name: 'notes.md', level: 2 }).waitFor();
});

test.serial('Stop closes the connection: the turn is cancelled upstream and on the server', async (t) => {
  const { page } = t.context;
  const projectId = await openNewProject(server, page, admin.token, orgId, 'Stop project');
  const chat = await openChat(page);
  const start = fake.requests.length;
  // The reply stalls after its first piece until the client goes away.
  fake.script({ text: ['Thinking ', 'very ', 'hard'], pauseAfter: 1 });
  await send(chat, 'Take your time');
  await chat.getByText('Thinking').waitFor();
  await chat.getByRole('button', { name: 'Stop' }).click();
  await chat.getByRole('status').filter({ hasText: 'Stopped.' }).waitFor();
  t.deepEqual(await fake.requests[start]!.closed, { beforeEnd: true }, 'the upstream request was cancelled');
  const agentId = (await server.api('GET', `/agent-config/default?project_id=${projectId}`, { token: admin.token })).body.data.id;
  const status = await eventually(async () => {
    const executions = (await server.api('GET', `/agent-config/${agentId}/executions`, { token: admin.token })).body.data.executions;
    return executions[0]?.status === 'cancelled' ? executions[0].status : undefined;
  }, 'the execution to be cancelled');
  t.is(status, 'cancelled');
  t.true(await chat.getByRole('button', { name: 'Send' }).isVisible());
  t.is(await page.evaluate('document.activeElement?.getAttribute("placeholder")'), 'Ctrl+Enter sends', 'focus is back in the message field');
});

test.serial("an agent whose provider is not configured is refused with an alert naming the variable; the message is kept", async (t) => {
  const { page } = t.context;
  const projectId = await openNewProject(server, page, admin.token, orgId, 'Unconfigured project');
  const created = await server.api('POST', '/agent-config/', {
    token: admin.token,
    body: { project_id: projectId, name: 'claude-writer', system_prompt: 'Be brief.', model: 'anthropic:claude-test' },
  });
  t.is(created.status, 201);
  const chat = await openChat(page);
  await chat.getByRole('combobox').selectOption({ label: 'claude-writer (anthropic:claude-test)' });
  await send(chat, 'Hello?');
  const alert = chat.getByRole('alert');
  await alert.waitFor();
  t.regex((await alert.textContent()) ?? '', /CNS_ANTHROPIC_API_KEY/);
  t.is(await chat.getByLabel('Message', { exact: true }).inputValue(), 'Hello?', 'the message can be sent again');
  t.is(await chat.getByRole('article').count(), 0);
});

test.serial('a provider failure during the turn is an alert in the conversation', async (t) => {
  const { page } = t.context;
  await openNewProject(server, page, admin.token, orgId, 'Failing provider project');
  const chat = await openChat(page);
  fake.script({ status: 401, errorMessage: 'invalid api key' });
  await send(chat, 'Anyone there?');
  const alert = chat.getByRole('article').getByRole('alert');
  await alert.waitFor();
  t.regex((await alert.textContent()) ?? '', /provider_unauthorized/);
});

test.serial('the chat is usable from the keyboard and fits a 390 px wide screen', async (t) => {
  const { page } = t.context;
  await page.setViewportSize({ width: 390, height: 844 });
  await openNewProject(server, page, admin.token, orgId, 'Narrow chat project');
  const chat = await openChat(page);
  fake.script({ text: ['A long answer: ', 'x'.repeat(300), ' and a path: some/very/long/folder/name/that/goes/on/and/on.md'] });
  await chat.getByLabel('Message', { exact: true }).focus();
  await page.keyboard.type('Say something long');
  await page.keyboard.press('Control+Enter');
  await chat.getByText(/and a path: some\/very\/long/).waitFor();
  await chat.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 390'), 'no horizontal scrolling');
});
