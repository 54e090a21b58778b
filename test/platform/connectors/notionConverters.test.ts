import test from 'ava';
import { readFileSync } from 'node:fs';
import { blocksToMarkdown } from '../../../src/platform/connectors/notion/blocksToMarkdown.ts';
import { markdownToBlocks, type NewBlock, type PageItem } from '../../../src/platform/connectors/notion/markdownToBlocks.ts';
import { assignNames, sanitizeName } from '../../../src/platform/connectors/notion/names.ts';
import { changedProperties, PropertyError, propertiesToJson } from '../../../src/platform/connectors/notion/properties.ts';
import type { Block, BlockNode, Database, ListAnswer, PropertyValue, RichText } from '../../../src/platform/connectors/notion/types.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/notion/${name}`, import.meta.url), 'utf8'));

/** The fixture's answers of GET /v1/blocks/{id}/children as a block tree. */
function tree(children: Record<string, ListAnswer<Block>[]>, id: string): BlockNode[] {
  return (children[id] ?? [])
    .flatMap((answer) => answer.results)
    .map((block) => ({ block, children: block.has_children && block.type !== 'child_page' ? tree(children, block.id) : [] }));
}

const page = fixture('page-blocks.json') as { page: string; child: string; children: Record<string, ListAnswer<Block>[]> };
const childLink = (id: string) => (id === page.child ? 'Plan/Meeting notes.md' : null);

test('a page of the block reference converts to Markdown faithfully', (t) => {
  const { markdown, lossy } = blocksToMarkdown(tree(page.children, page.page), childLink);
  t.is(
    markdown,
    [
      '# Project plan',
      '',
      'We ship **on time**, *mostly* — see [the docs](https://example.com/docs) and `npm test` ~~never~~',
      '',
      '## Tasks',
      '',
      '- [ ] Write spec',
      '- [x] Review',
      '- Parent',
      '  - Child',
      '- Sibling',
      '',
      '1. First',
      '2. Second',
      '',
      '```typescript',
      'const x: number = 1;',
      'console.log(x);',
      '```',
      '',
      '> Stay hungry',
      '',
      '> 💡 Remember the demo',
      '',
      '---',
      '',
      '| Name | Role |',
      '| --- | --- |',
      '| Ada | Engineer |',
      '',
      '![Diagram](https://example.com/a.png)',
      '',
      '[Meeting notes](<Plan/Meeting notes.md>)',
      '',
      '### Odd text',
      '',
      '2 \\* 3 = 6, \\[brackets\\] and snake_case stay text',
      '',
      'See [Meeting notes](<Plan/Meeting notes.md>)',
      '',
    ].join('\n'),
  );
  t.deepEqual(lossy, [], 'every block of this page goes back');
});

/** Blocks as comparable shapes: type, plain text, marks and links, children. */
function shape(b: NewBlock): unknown {
  const rich = (b.data.rich_text as { type: string; text?: { content: string; link: { url: string } | null }; annotations: Record<string, boolean>; mention?: unknown }[] | undefined) ?? [];
  return {
    type: b.type,
    text: rich.map((r) => (r.type === 'text' ? [r.text!.content, Object.keys(r.annotations).filter((k) => r.annotations[k]).join('+'), r.text!.link?.url ?? ''] : [r.type])),
    ...(b.data.checked !== undefined ? { checked: b.data.checked } : {}),
    ...(b.data.language ? { language: b.data.language } : {}),
    ...(b.data.icon ? { icon: b.data.icon } : {}),
    ...(b.type === 'table_row' ? { cells: (b.data.cells as { text: { content: string } }[][]).map((c) => c.map((r) => r.text.content).join('')) } : {}),
    children: b.children.map(shape),
  };
}

test('Markdown goes back to the same blocks (the round trip a push relies on)', (t) => {
  const { markdown } = blocksToMarkdown(tree(page.children, page.page), childLink);
  const items = markdownToBlocks(markdown, {
    anchorFor: (href) => (href === 'Plan/Meeting notes.md' ? page.child : null),
    pageFor: (href) => (href === 'Plan/Meeting notes.md' ? page.child : null),
  });
  const anchorAt = items.findIndex((i) => i.kind === 'anchor');
  t.deepEqual(items[anchorAt], { kind: 'anchor', blockId: page.child }, 'the child page stays where it is');
  const blocks = items.filter((i): i is Extract<PageItem, { kind: 'block' }> => i.kind === 'block').map((i) => i.block);
  const original = tree(page.children, page.page).filter((n) => n.block.type !== 'child_page' && (n.block.paragraph as { rich_text?: unknown[] } | undefined)?.rich_text?.length !== 0);
  t.deepEqual(
    blocks.map((b) => b.type),
    original.map((n) => n.block.type),
  );
  t.deepEqual(shape(blocks[1]), {
    type: 'paragraph',
    text: [
      ['We ship ', '', ''],
      ['on time', 'bold', ''],
      [', ', '', ''],
      ['mostly', 'italic', ''],
      [' — see ', '', ''],
      ['the docs', '', 'https://example.com/docs'],
      [' and ', '', ''],
      ['npm test', 'code', ''],
      [' ', '', ''],
      ['never', 'strikethrough', ''],
    ],
    children: [],
  });
  t.deepEqual(shape(blocks[3]), { type: 'to_do', text: [['Write spec', '', '']], checked: false, children: [] });
  t.deepEqual(shape(blocks[4]), { type: 'to_do', text: [['Review', '', '']], checked: true, children: [] });
  t.deepEqual(shape(blocks[5]), { type: 'bulleted_list_item', text: [['Parent', '', '']], children: [{ type: 'bulleted_list_item', text: [['Child', '', '']], children: [] }] });
  t.deepEqual(shape(blocks[9]), { type: 'code', text: [['const x: number = 1;\nconsole.log(x);', '', '']], language: 'typescript', children: [] });
  t.deepEqual(shape(blocks[11]), { type: 'callout', text: [['Remember the demo', '', '']], icon: { type: 'emoji', emoji: '💡' }, children: [] });
  const table = blocks[13];
  t.deepEqual(table.data, { table_width: 2, has_column_header: true, has_row_header: false });
  t.deepEqual(table.children.map((r) => (shape(r) as { cells: string[] }).cells), [['Name', 'Role'], ['Ada', 'Engineer']]);
  t.deepEqual(blocks[14].data.external, { url: 'https://example.com/a.png' });
  t.deepEqual(shape(blocks[16]), { type: 'paragraph', text: [['2 * 3 = 6, [brackets] and snake_case stay text', '', '']], children: [] }, 'escapes read back as text');
  t.deepEqual(shape(blocks[17]), { type: 'paragraph', text: [['See ', '', ''], ['mention']], children: [] }, 'a link to a synced page is a mention again');
});

const rt = (content: string, annotations: Partial<Record<string, boolean>> = {}, href: string | null = null): RichText => ({
  type: 'text',
  text: { content, link: href ? { url: href } : null },
  annotations: { bold: false, italic: false, strikethrough: false, underline: false, code: false, color: 'default', ...annotations },
  plain_text: content,
  href,
});
const node = (type: string, payload: Record<string, unknown>, children: BlockNode[] = []): BlockNode => ({
  block: { object: 'block', id: `id-${type}-${Math.random()}`, type, has_children: children.length > 0, [type]: payload },
  children,
});

test('nesting: numbered items, to-dos with children, quotes and toggles keep their structure', (t) => {
  const blocks = [
    node('numbered_list_item', { rich_text: [rt('one')] }, [node('numbered_list_item', { rich_text: [rt('one.a')] }), node('to_do', { rich_text: [rt('check')], checked: true })]),
    node('numbered_list_item', { rich_text: [rt('two')] }),
    node('toggle', { rich_text: [rt('More')] }, [node('paragraph', { rich_text: [rt('hidden')] })]),
    node('quote', { rich_text: [rt('line 1\nline 2')] }, [node('paragraph', { rich_text: [rt('nested')] })]),
    node('equation', { expression: 'e = mc^2' }),
    node('paragraph', { rich_text: [rt('x '), { type: 'equation', equation: { expression: 'a+b' }, plain_text: 'a+b', href: null }] }),
  ];
  const { markdown, lossy } = blocksToMarkdown(blocks);
  t.is(
    markdown,
    '1. one\n   1. one.a\n\n   - [x] check\n2. two\n\n<details>\n<summary>More</summary>\n\nhidden\n\n</details>\n\n> line 1\n> line 2\n>\n> nested\n\n$$\ne = mc^2\n$$\n\nx $a+b$\n',
  );
  t.deepEqual(lossy, []);
  const back = markdownToBlocks(markdown).map((i) => (i.kind === 'block' ? shape(i.block) : i));
  t.deepEqual(back[0], {
    type: 'numbered_list_item',
    text: [['one', '', '']],
    children: [
      { type: 'numbered_list_item', text: [['one.a', '', '']], children: [] },
      { type: 'to_do', text: [['check', '', '']], checked: true, children: [] },
    ],
  });
  t.deepEqual(back[2], { type: 'toggle', text: [['More', '', '']], children: [{ type: 'paragraph', text: [['hidden', '', '']], children: [] }] });
  t.deepEqual(back[3], { type: 'quote', text: [['line 1\nline 2', '', '']], children: [{ type: 'paragraph', text: [['nested', '', '']], children: [] }] });
  const equation = markdownToBlocks(markdown)[4];
  t.deepEqual(equation.kind === 'block' && equation.block, { type: 'equation', data: { expression: 'e = mc^2' }, children: [] });
  t.deepEqual(back[5], { type: 'paragraph', text: [['x ', '', ''], ['equation']], children: [] });
});

test('blocks Markdown cannot carry back are named as lossy, and still shown', (t) => {
  const { markdown, lossy } = blocksToMarkdown([
    node('image', { type: 'file', file: { url: 'https://prod-files-secure.s3.us-west-2.amazonaws.com/x/y.png?X-Amz-Signature=abc', expiry_time: '2024-05-02T09:30:00.000Z' }, caption: [] }),
    node('column_list', {}, [node('column', {}, [node('paragraph', { rich_text: [rt('left')] })])]),
    node('bookmark', { url: 'https://example.com', caption: [] }),
    node('table_of_contents', { color: 'default' }),
  ]);
  t.deepEqual(lossy, ['bookmark', 'column', 'column_list', 'table_of_contents', 'uploaded image']);
  t.true(markdown.includes('left'));
  t.true(markdown.includes('[https://example.com](https://example.com)'));
  t.true(markdown.includes('<!-- notion: table_of_contents -->'));
});

test('text that looks like Markdown is escaped, and reads back as the same text', (t) => {
  const tricky = ['# not a heading', '- not a list', '1. not numbered', '> not a quote', 'a *b* _c_ `d` [e](f) <g> ~h~ &amp; \\ $1 and $2'];
  for (const text of tricky) {
    const { markdown } = blocksToMarkdown([node('paragraph', { rich_text: [rt(text)] })]);
    const back = markdownToBlocks(markdown);
    t.is(back.length, 1, text);
    const block = back[0].kind === 'block' ? back[0].block : null;
    t.is(block?.type, 'paragraph', text);
    t.is((block?.data.rich_text as { text: { content: string } }[]).map((r) => r.text.content).join(''), text, markdown);
  }
});

test('long text is split at Notion\'s 2,000 characters per text object; unknown code languages are plain text', (t) => {
  const long = 'x'.repeat(4500);
  const [p] = markdownToBlocks(long);
  t.deepEqual((p.kind === 'block' ? (p.block.data.rich_text as { text: { content: string } }[]) : []).map((r) => r.text.content.length), [2000, 2000, 500]);
  const [code] = markdownToBlocks('```brainfuck\n+++\n```\n\n```js\nx\n```');
  t.is(code.kind === 'block' && code.block.data.language, 'plain text');
  const [, js] = markdownToBlocks('```brainfuck\n+++\n```\n\n```js\nx\n```');
  t.is(js.kind === 'block' && js.block.data.language, 'javascript');
});

test('row properties of every type become JSON keyed by property name', (t) => {
  const row = fixture('database-query.json').results[0] as { properties: Record<string, PropertyValue> };
  t.deepEqual(propertiesToJson(row.properties), {
    Name: 'Launch website',
    Notes: 'Copy is final',
    Estimate: 5,
    Priority: 'High',
    Tags: ['web', 'q3'],
    Status: 'In progress',
    Due: '2024-06-01',
    Window: { start: '2024-06-01T09:00:00.000+02:00', end: '2024-06-03T17:00:00.000+02:00' },
    Done: false,
    Link: 'https://example.com/launch',
    Email: 'ada@example.com',
    Phone: '+1 555 0100',
    Owner: ['6794760a-1f15-45cd-9c65-0dfe42f5135a'],
    Project: ['1b2c3d4e-0000-4000-8000-00000000aaaa'],
    Score: 42,
    'Task count': 3,
    Created: '2024-05-01T10:00:00.000Z',
    Edited: '2024-05-02T08:30:00.000Z',
    'Created by': '6794760a-1f15-45cd-9c65-0dfe42f5135a',
    ID: 'TASK-7',
  });
});

test('row edits become typed property values; computed or unknown properties are refused', (t) => {
  const schema = (fixture('database.json') as Database).properties;
  const previous = { Name: 'Launch website', Estimate: 5, Priority: 'High', Tags: ['web'], Done: false, Due: '2024-06-01', Owner: [] };
  t.deepEqual(
    changedProperties(schema, { ...previous, Name: 'Launch site', Estimate: null, Priority: 'Low', Tags: ['web', 'q4'], Done: true, Due: { start: '2024-07-01', end: '2024-07-02' }, Owner: ['u1'] }, previous),
    {
      Name: { title: [{ type: 'text', text: { content: 'Launch site' } }] },
      Estimate: { number: null },
      Priority: { select: { name: 'Low' } },
      Tags: { multi_select: [{ name: 'web' }, { name: 'q4' }] },
      Done: { checkbox: true },
      Due: { date: { start: '2024-07-01', end: '2024-07-02' } },
      Owner: { people: [{ id: 'u1' }] },
    },
  );
  t.deepEqual(changedProperties(schema, previous, previous), {}, 'nothing changed, nothing sent');
  t.throws(() => changedProperties(schema, { ...previous, Score: 1 }, { ...previous, Score: 42 }), { instanceOf: PropertyError, message: /"Score" is a formula property/ });
  t.throws(() => changedProperties(schema, { ...previous, Nope: 1 }, previous), { instanceOf: PropertyError, message: /no property "Nope"/ });
  t.throws(() => changedProperties(schema, { ...previous, Estimate: 'five' }, previous), { instanceOf: PropertyError, message: /"Estimate" \(number\) must be a number/ });
});

test('names: titles become safe, unique names; the one that had a name keeps it', (t) => {
  t.is(sanitizeName('  a/b\\c  '), 'a b c');
  t.is(sanitizeName('..hidden'), 'hidden');
  t.is(sanitizeName(''), 'Untitled');
  t.is(sanitizeName('.git'), 'git');
  t.is(sanitizeName('x'.repeat(300)).length, 120);
  const names = assignNames([
    { id: 'aaaaaaaa-1111', title: 'Notes', created: '2024-02-01' },
    { id: 'bbbbbbbb-2222', title: 'notes', created: '2024-01-01' },
    { id: 'cccccccc-3333', title: 'Other' },
  ]);
  t.deepEqual(Object.fromEntries(names), { 'aaaaaaaa-1111': 'Notes (aaaaaaaa)', 'bbbbbbbb-2222': 'notes', 'cccccccc-3333': 'Other' });
  const kept = assignNames([
    { id: 'aaaaaaaa-1111', title: 'Notes', previous: 'Notes' },
    { id: 'bbbbbbbb-2222', title: 'Notes', created: '2000-01-01' },
  ]);
  t.is(kept.get('aaaaaaaa-1111'), 'Notes', 'an existing node is not renamed because an older namesake appeared');
  t.is(kept.get('bbbbbbbb-2222'), 'Notes (bbbbbbbb)');
});
