import test from 'ava';
import { EditRefused, planEdits } from '../../../src/platform/connectors/googleDocs/edits.ts';
import { keysOf, parseMarkdown } from '../../../src/platform/connectors/googleDocs/parse.ts';
import { renderDocument } from '../../../src/platform/connectors/googleDocs/render.ts';
import type { DocsDocument } from '../../../src/platform/connectors/googleDocs/types.ts';
import { FakeGoogleDocs } from './fixtures/googleDocs/fakeGoogleDocs.ts';
import { FlatDoc } from './fixtures/googleDocs/flatDoc.ts';
import { linkStyle, PLAN_ID, PLAN_MARKDOWN, projectPlan } from './fixtures/googleDocs/sampleDocument.ts';

// Google Docs ⇄ Markdown: the rendering of documents in documents.get's wire format, the
// parsing of edited Markdown, and the batchUpdate requests an edit becomes — applied to a
// document held as Google indexes it (FlatDoc), whose rendering must then be the edit.

const docOf = (d: FlatDoc, id = PLAN_ID): DocsDocument => {
  const fake = new FakeGoogleDocs();
  fake.add(id, 'Doc', d);
  return fake.documentJson(id, 'SUGGESTIONS_INLINE') as unknown as DocsDocument;
};
const render = (d: FlatDoc) => renderDocument(docOf(d)).markdown;

/** Plans the edit, applies its requests to a copy of `d` as Google would, and returns what the document then renders as. */
function applyEdit(d: FlatDoc, edit: (md: string) => string) {
  const rendered = renderDocument(docOf(d));
  const next = edit(rendered.markdown);
  const requests = planEdits(rendered, parseMarkdown(next));
  const after = d.clone();
  for (const r of requests) after.apply(r);
  return { requests, next, after: render(after) };
}

test('the realistic plan renders as the hand-written Markdown: headings, styles, nested lists, table, image, rule, footnote', (t) => {
  t.is(render(projectPlan()), PLAN_MARKDOWN);
});

test('parsing the rendered Markdown gives back every block\'s meaning (no edit is seen where there is none)', (t) => {
  const rendered = renderDocument(docOf(projectPlan()));
  t.deepEqual(keysOf(parseMarkdown(rendered.markdown)), rendered.blocks.map((b) => b.key));
  t.deepEqual(planEdits(rendered, parseMarkdown(rendered.markdown)), []);
  // Another spelling of the same meaning is no edit either.
  const respelled = rendered.markdown.replace('- Ship the connector', '* Ship the connector').replace('*every*', '_every_').replace('2. Build the fake', '7. Build the fake');
  t.deepEqual(planEdits(rendered, parseMarkdown(respelled)), []);
});

test('headings 1-6, a title and a subtitle; a line break in a heading is <br>, in a paragraph a backslash', (t) => {
  const d = new FlatDoc();
  d.para(['Title'], { style: 'TITLE' }).para(['Sub'], { style: 'SUBTITLE' });
  for (let n = 1; n <= 6; n++) d.para([`H${n}`], { style: `HEADING_${n}` });
  d.para(['Two\u000blines'], { style: 'HEADING_2' }).para(['Soft\u000bbreak']).para([]);
  t.is(render(d), '# Title\n\n## Sub\n\n# H1\n\n## H2\n\n### H3\n\n#### H4\n\n##### H5\n\n###### H6\n\n## Two<br>lines\n\nSoft\\\nbreak\n');
});

test('nested lists: ordered inside bulleted and back, numbering per level as Google counts, a new numbered list apart', (t) => {
  const d = new FlatDoc();
  const mixed = d.list('kix.mixed', 'bullet');
  // Level 1 of this list is numbered (a list whose levels differ, as the editor allows).
  const levels = d.lists[mixed].listProperties.nestingLevels;
  levels[1] = { bulletAlignment: 'START', glyphType: 'DECIMAL', glyphFormat: '%1.', startNumber: 1 };
  const nums = d.list('kix.nums', 'ordered');
  d.para(['apples'], { bullet: [mixed, 0] })
    .para(['first'], { bullet: [mixed, 1] })
    .para(['second'], { bullet: [mixed, 1] })
    .para(['deep'], { bullet: [mixed, 2] })
    .para(['pears'], { bullet: [mixed, 0] })
    .para(['restart'], { bullet: [mixed, 1] })
    .para(['Between.'])
    .para(['one'], { bullet: [nums, 0] })
    .para(['two'], { bullet: [nums, 0] })
    .para([]);
  const md = render(d);
  t.is(md, '- apples\n  1. first\n  2. second\n     - deep\n- pears\n  1. restart\n\nBetween.\n\n1. one\n2. two\n');
  const parsed = parseMarkdown(md);
  t.deepEqual(
    parsed.map((b) => (b.kind === 'paragraph' ? b.list : null)),
    [
      { ordered: false, depth: 0 },
      { ordered: true, depth: 1 },
      { ordered: true, depth: 1 },
      { ordered: false, depth: 2 },
      { ordered: false, depth: 0 },
      { ordered: true, depth: 1 },
      null,
      { ordered: true, depth: 0 },
      { ordered: true, depth: 0 },
    ],
  );
  t.deepEqual(keysOf(parsed), renderDocument(docOf(d)).blocks.map((b) => b.key));
});

test('a numbered list continued after a paragraph keeps Google\'s number, apart from the text before it', (t) => {
  const d = new FlatDoc();
  const bullets = d.list('kix.b', 'bullet');
  const nums = d.list('kix.n', 'ordered');
  d.para(['one'], { bullet: [nums, 0] }).para(['Aside.']).para(['two'], { bullet: [nums, 0] }).para(['dot'], { bullet: [bullets, 0] }).para(['three'], { bullet: [nums, 0] }).para([]);
  const md = render(d);
  // "3." right under a bullet would read as the bullet's text: a blank line keeps it a list.
  t.is(md, '1. one\n\nAside.\n\n2. two\n- dot\n\n3. three\n');
  t.deepEqual(keysOf(parseMarkdown(md)), renderDocument(docOf(d)).blocks.map((b) => b.key));
});

test('styles: bold, italic, strikethrough, links and their overlaps; white space stays outside emphasis', (t) => {
  const d = new FlatDoc();
  d.para([
    { text: 'bold ', style: { bold: true } },
    { text: 'both', style: { bold: true, italic: true } },
    { text: ' italic', style: { italic: true } },
    ' plain ',
    { text: 'gone', style: { strikethrough: true, bold: true } },
    ' ',
    { text: 'a ', style: { ...linkStyle('https://a.example/x_(y)'), bold: true } },
    { text: 'link', style: linkStyle('https://a.example/x_(y)') },
    ' mail ',
    { text: 'me', style: linkStyle('mailto:ada@example.com') },
  ]).para([]);
  const md = render(d);
  t.is(md, '**bold *both*** *italic* plain ~~**gone**~~ [**a** link](<https://a.example/x_(y)>) mail [me](mailto:ada@example.com)\n');
  t.deepEqual(keysOf(parseMarkdown(md)), renderDocument(docOf(d)).blocks.map((b) => b.key));
});

test('tables: the first row is the header, cells with several paragraphs, styles and escaped pipes', (t) => {
  const d = new FlatDoc();
  d.table([
    [['Name'], [{ text: 'Notes', style: { italic: true } }]],
    [['a|b'], ['see ', { text: 'docs', style: linkStyle('https://docs.example') }, '\nand more']],
  ]).para([]);
  const md = render(d);
  t.is(md, '| Name | *Notes* |\n| --- | --- |\n| a\\|b | see [docs](https://docs.example)<br>and more |\n');
  t.deepEqual(keysOf(parseMarkdown(md)), renderDocument(docOf(d)).blocks.map((b) => b.key));
});

test('images: inline images link to their content address with their description (else title) as text', (t) => {
  const d = new FlatDoc();
  d.image('kix.a', { uri: 'https://lh7-rt.googleusercontent.com/docsz/a?key=1', description: 'A chart' });
  d.image('kix.b', { uri: 'https://lh7-rt.googleusercontent.com/docsz/b?key=2', title: 'Logo' });
  d.para(['See ', { image: 'kix.a' }, ' and ', { image: 'kix.b' }]).para([]);
  t.is(render(d), 'See ![A chart](https://lh7-rt.googleusercontent.com/docsz/a?key=1) and ![Logo](https://lh7-rt.googleusercontent.com/docsz/b?key=2)\n');
});

test('smart chips, page breaks and sections: people and rich links as links, a page break and a section break show nothing', (t) => {
  const doc = docOf(new FlatDoc().para(['x']).para([]));
  const content = doc.body!.content!;
  content.splice(1, 1, {
    startIndex: 1,
    endIndex: 6,
    paragraph: {
      elements: [
        { startIndex: 1, endIndex: 2, person: { personProperties: { name: 'Ada Lovelace', email: 'ada@example.com' } } },
        { startIndex: 2, endIndex: 3, textRun: { content: ' ', textStyle: {} } },
        { startIndex: 3, endIndex: 4, richLink: { richLinkProperties: { title: 'Budget', uri: 'https://docs.google.com/spreadsheets/d/abc' } } },
        { startIndex: 4, endIndex: 5, pageBreak: {} },
        { startIndex: 5, endIndex: 6, textRun: { content: '\n', textStyle: {} } },
      ],
      paragraphStyle: { namedStyleType: 'NORMAL_TEXT' },
    },
  });
  content.splice(2, 0, { startIndex: 6, endIndex: 7, sectionBreak: { sectionStyle: { sectionType: 'NEXT_PAGE' } } });
  const rendered = renderDocument(doc);
  t.is(rendered.markdown, '[Ada Lovelace](mailto:ada@example.com) [Budget](https://docs.google.com/spreadsheets/d/abc)\n');
  t.false(rendered.segs[1].plain, 'a paragraph with chips is never rewritten');
  t.is(rendered.segs[2].kind, 'section');
});

test('push plan: a word changed in one paragraph is that paragraph deleted and written again, styles set, nothing else', (t) => {
  const d = projectPlan();
  const { requests, next, after } = applyEdit(d, (md) => md.replace('1\\. not a list', '2\\. not a list'));
  t.is(after, next);
  // The paragraph "1. not a list…" sits at 325-382 of the plan (its newline at 381).
  t.deepEqual(requests, [
    { deleteContentRange: { range: { startIndex: 325, endIndex: 381 } } },
    { insertText: { location: { index: 325 }, text: '2. not a list, *stars*, a_b, https://example.org and <b>' } },
    { updateTextStyle: { range: { startIndex: 325, endIndex: 381 }, textStyle: {}, fields: 'bold,italic,underline,strikethrough,link' } },
  ]);
});

test('push plan: a heading level change is one updateParagraphStyle; a title edited keeps its title style', (t) => {
  const heading = applyEdit(projectPlan(), (md) => md.replace('### Status', '## Status'));
  t.is(heading.after, heading.next);
  t.is(heading.requests.length, 1);
  t.like(heading.requests[0], { updateParagraphStyle: { paragraphStyle: { namedStyleType: 'HEADING_2' }, fields: 'namedStyleType' } });

  const title = applyEdit(projectPlan(), (md) => md.replace('# Project Plan', '# Project Plan 2024'));
  t.is(title.after, title.next);
  t.false(JSON.stringify(title.requests).includes('updateParagraphStyle'), 'the paragraph keeps TITLE (a `#` may be a title)');
});

test('push plan: list items added (continuing the list, nested by a tab), removed, renumbered and turned into another kind', (t) => {
  const added = applyEdit(projectPlan(), (md) => md.replace('- Write tests\n', '- Write tests\n- Review **code**\n  - twice\n'));
  t.is(added.after, added.next);
  // Written after "Write tests" (its newline at 179): the new items go on in its list.
  t.deepEqual(added.requests[0], { insertText: { location: { index: 179 }, text: '\nReview code\n\ttwice' } });
  t.true(added.requests.some((r) => JSON.stringify(r) === JSON.stringify({ updateTextStyle: { range: { startIndex: 187, endIndex: 191 }, textStyle: { bold: true }, fields: 'bold' } })));
  t.deepEqual(added.requests.at(-1), { createParagraphBullets: { range: { startIndex: 180, endIndex: 199 }, bulletPreset: 'BULLET_DISC_CIRCLE_SQUARE' } });

  const removed = applyEdit(projectPlan(), (md) => md.replace('  - Pull documents\n', ''));
  t.is(removed.after, removed.next);
  t.is(removed.requests.length, 1);
  t.truthy(removed.requests[0].deleteContentRange);

  const kind = applyEdit(projectPlan(), (md) => md.replace('- Write tests', '1. Write tests'));
  t.is(kind.after, kind.next);
  t.deepEqual(Object.keys(kind.requests[0]).concat(Object.keys(kind.requests[1])), ['deleteParagraphBullets', 'createParagraphBullets']);

  const renumbered = applyEdit(projectPlan(), (md) => md.replace('1. Read the reference\n2. Build the fake\n', '1. Read it\n2. Build\n3. More\n'));
  // Google numbers the items itself: the same list, the last item now fourth.
  t.deepEqual(keysOf(parseMarkdown(renumbered.after)), keysOf(parseMarkdown(renumbered.next)));
  t.true(renumbered.after.includes('3. More\n   1. Nested detail\n4. Run the tests'));
});

test('push plan: several places at once are sent from the end of the document back', (t) => {
  const { requests, next, after } = applyEdit(projectPlan(), (md) => md.replace('Run the tests', 'Run all tests 🚀').replace('# Overview', '# Summary').replace('Line one', 'Line 1'));
  t.is(after, next);
  const starts = requests.filter((r) => r.insertText).map((r) => (r.insertText as { location: { index: number } }).location.index);
  t.deepEqual(starts, [...starts].sort((a, b) => b - a));
  t.is(starts.length, 3);
});

test('push plan: paragraphs added between others, and the last paragraphs of the body deleted', (t) => {
  const added = applyEdit(projectPlan(), (md) => md.replace('## Goals', 'A new paragraph with a [link](https://x.org).\n\n## Goals'));
  t.is(added.after, added.next);
  const appended = applyEdit(projectPlan(), (md) => md.replace('\n\n[^1]:', '\n\nThe end.\n\n[^1]:'));
  t.is(appended.after, appended.next);
  const d = new FlatDoc().para(['Keep']).para(['Drop me'], { style: 'HEADING_2' });
  const dropped = applyEdit(d, (md) => md.replace('\n\n## Drop me', ''));
  t.is(dropped.after, 'Keep\n');
  // The body's final newline stays: the kept paragraph gives up its own and gets its style back.
  t.deepEqual(dropped.requests, [
    { deleteContentRange: { range: { startIndex: 5, endIndex: 13 } } },
    { updateParagraphStyle: { range: { startIndex: 1, endIndex: 6 }, paragraphStyle: { namedStyleType: 'NORMAL_TEXT' }, fields: 'namedStyleType' } },
  ]);
});

test('push plan refuses what it cannot write faithfully: tables, images, rules, footnotes, chips, code, mixed new lists', (t) => {
  const refused = (edit: (md: string) => string) => t.throws(() => applyEdit(projectPlan(), edit), { instanceOf: EditRefused })!.message;
  t.regex(refused((md) => md.replace('| Pull |', '| Pulls |')), /tables are not sent back/);
  t.regex(refused((md) => md.replace('![Architecture diagram]', '![Diagram]')), /holds what Markdown cannot carry back/);
  t.regex(refused((md) => md.replace('\n---\n', '\nText\n')), /holds what Markdown cannot carry back/);
  t.regex(refused((md) => md.replace('last quarter', 'last year')), /footnotes cannot be edited/);
  t.regex(refused((md) => `${md}\nAfter the footnotes.\n`), /cannot be placed from here/);
  t.regex(refused((md) => md.replace('The **sync', 'A **sync')), /holds what Markdown cannot carry back/);
  t.regex(refused((md) => md.replace('## Goals', '```\ncode\n```\n\n## Goals')), /a code block cannot be written/);
  t.regex(refused((md) => md.replace('## Goals', '> quoted\n\n## Goals')), /a quote cannot be written/);
  t.regex(refused((md) => md.replace('## Goals', 'New ![img](https://x/y.png)\n\n## Goals')), /an image cannot be written/);
  t.regex(refused((md) => md.replace('## Goals', '- new\n  1. mixed\n\n## Goals')), /mixing numbered and bulleted/);
  // An image's address alone is not compared (Google hands out a new one at every read).
  t.deepEqual(applyEdit(projectPlan(), (md) => md.replace('AD_4nXdiagram', 'other')).requests, []);
});
