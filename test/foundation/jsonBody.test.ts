import test from 'ava';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';
import { readJsonBody, STREAM_PARSE_ABOVE } from '../../src/http/jsonBody.ts';
import { newProject } from '../git/gitFixture.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The JSON body reader: small bodies parsed whole, large ones as they arrive; the same rules for both.
const LIMIT = 16 * 1024 * 1024;

/** A request stream delivering `body` in chunks, with or without a declared length. */
function request(body: Buffer | string, headers: Record<string, string> = {}, chunkSize = 64 * 1024): IncomingMessage {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  const stream = Readable.from(chunks) as unknown as IncomingMessage;
  stream.headers = headers;
  return stream;
}

/** A body over the streaming threshold: `files` padded with many items. */
function bigBody(extra: string): string {
  const files = Array.from({ length: 20_000 }, (_, i) => ({ path: `d/f${i}.md`, content: `# file ${i} ${'x'.repeat(40)}`, node_type: 'markdown' }));
  const text = JSON.stringify({ files }).slice(0, -1) + extra + '}';
  return text;
}

const both = (body: string) => [
  { how: 'whole', req: () => request(body, { 'content-length': String(Buffer.byteLength(body)) }) },
  { how: 'streamed', req: () => request(body) },
];

test('large and small bodies parse to the same value, whether the length is declared or not', async (t) => {
  const big = bigBody(', "message": "m\\u00e9"');
  t.true(big.length > STREAM_PARSE_ABOVE);
  const expected = JSON.parse(big);
  t.deepEqual(await readJsonBody(request(big), LIMIT), expected, 'streamed (no length)');
  t.deepEqual(await readJsonBody(request(big, { 'content-length': String(big.length) }), LIMIT), expected, 'declared large: streamed');
  const small = '{"a": [1, 2.5, "ü", null, true], "b": {"c": {}}}\n';
  for (const { how, req } of both(small)) t.deepEqual(await readJsonBody(req(), LIMIT), JSON.parse(small), how);
  // Multi-byte characters split across chunk boundaries.
  const umlauts = JSON.stringify({ s: 'äöü€'.repeat(1000) });
  t.deepEqual(await readJsonBody(request(umlauts, {}, 7), LIMIT), JSON.parse(umlauts));
});

test('the same refusals either way: scalars, bad JSON, trailing data, lossy numbers with their field, __proto__ keys', async (t) => {
  const cases: [string, RegExp | string][] = [
    ['"hello"', /only objects and arrays/],
    ['{"a": ', /not valid JSON/],
    ['{"a": 1} {"b": 2}', /not valid JSON/],
    ['{"a": {"b": [1, 1e400]}}', 'a.b.1'],
    ['{"files": [{"content": {"n": 9007199254740993}}]}', 'files.0.content.n'],
    ['{"a": 1, "__proto__": {"admin": true}}', /__proto__/],
  ];
  for (const [body, expected] of cases) {
    // A scalar is fine as a member: only the top level must be an object or array.
    const variants = body === '"hello"' ? [body] : [body, bigBody(`, "zz": ${body}`)];
    for (const variant of variants) {
      for (const { how, req } of both(variant)) {
        const e = await t.throwsAsync(readJsonBody(req(), LIMIT), undefined, `${body} (${how}, ${variant.length} bytes)`);
        const err = e as unknown as { code: string; message: string; details: { field: string }[] };
        t.is(err.code, 'VALIDATION_ERROR', `${body} (${how})`);
        if (typeof expected === 'string') {
          const field = variant === body ? expected : `zz.${expected}`;
          t.is(err.details[0]!.field, field, `${body} (${how}) names the field`);
        } else {
          t.regex(err.message, expected, `${body} (${how})`);
        }
      }
    }
  }
});

test('over the limit is 413, declared or discovered while streaming; gzip bodies are decoded and limited decoded', async (t) => {
  const big = bigBody('');
  const tiny = 1024 * 1024;
  const declared = await t.throwsAsync(readJsonBody(request(big, { 'content-length': String(big.length) }), tiny));
  t.is((declared as unknown as { code: string }).code, 'PAYLOAD_TOO_LARGE');
  const chunked = await t.throwsAsync(readJsonBody(request(big), tiny));
  t.is((chunked as unknown as { code: string }).code, 'PAYLOAD_TOO_LARGE');
  const gz = gzipSync(big);
  t.true(gz.length < tiny, 'compressed it fits');
  t.deepEqual(await readJsonBody(request(gz, { 'content-encoding': 'gzip' }), LIMIT), JSON.parse(big));
  const bomb = await t.throwsAsync(readJsonBody(request(gz, { 'content-encoding': 'gzip' }), tiny));
  t.is((bomb as unknown as { code: string }).code, 'PAYLOAD_TOO_LARGE', 'the limit applies to the decoded size');
  const odd = await t.throwsAsync(readJsonBody(request('{}', { 'content-encoding': 'compress' }), LIMIT));
  t.is((odd as unknown as { code: string }).code, 'VALIDATION_ERROR');
});

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

test('over HTTP: a large bulk write goes through the streamed parser, and a lossy number deep inside it is a 422 that writes nothing', async (t) => {
  const p = await newProject(server, 'json-body');
  const files = Array.from({ length: 12_000 }, (_, i) => ({ path: `big/f${i}.md`, content: `# ${i} ${'y'.repeat(80)}`, node_type: 'markdown' }));
  const body = JSON.stringify({ files });
  t.true(body.length > STREAM_PARSE_ABOVE);
  const bad = JSON.stringify({ files: [...files.slice(0, 5000), { path: 'n.json', node_type: 'json', content: { n: 1 } }] }).replace('{"n":1}', '{"n":1e400}');
  const refused = await server.api('POST', `/content/${p.projectId}/bulk-write`, { token: p.token, raw: bad, headers: { 'content-type': 'application/json' } });
  t.is(refused.status, 422);
  t.is(refused.body.error.details[0].field, 'files.5000.content.n');
  const written = await server.api('POST', `/content/${p.projectId}/bulk-write`, { token: p.token, raw: body, headers: { 'content-type': 'application/json' } });
  t.is(written.status, 200, JSON.stringify(written.body).slice(0, 300));
  const ls = await server.api('GET', `/content/${p.projectId}/stat?path=big`, { token: p.token });
  t.is(ls.body.data.children_count, 12_000);
});
