import test from 'ava';
import { writeFileSync } from 'node:fs';
import { ConversionError, convert, formats } from '../../src/ingest/converters/index.ts';
import { closeOcr } from '../../src/ingest/converters/ocr.ts';
import { imageSize } from '../../src/ingest/converters/imageSize.ts';
import { textPng } from './fixtures/png.ts';
import { limits, workDir } from './fixtures/workDir.ts';

const work = workDir('image');
test.after.always(closeOcr);

test('a PNG of text becomes Markdown through offline OCR', async (t) => {
  t.true(formats().ocr);
  const file = work.path('scan.png');
  writeFileSync(file, textPng(['INVOICE 2024-0042', 'TOTAL 1,234.56 EUR', 'THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG.']));
  const out = await convert({ file, name: 'scan.png', mode: 'markdown', limits });
  t.deepEqual(out.warnings, []);
  t.deepEqual(out.nodes, [{ name: 'scan.md', type: 'markdown', content: 'INVOICE 2024-0042\nTOTAL 1,234.56 EUR\nTHE QUICK BROWN FOX JUMPS OVER THE LAZY DOG.\n' }]);
  // The worker is reused: a second image does not load the model again (which takes ~0.5 s or more).
  const started = performance.now();
  const again = await convert({ file, name: 'again.png', mode: 'markdown', limits });
  t.is(again.nodes[0]!.name, 'again.md');
  t.log(`second recognition: ${Math.round(performance.now() - started)} ms`);
});

test('an image with no text says so; a file that is no image is corrupt', async (t) => {
  const blank = work.path('blank.png');
  writeFileSync(blank, textPng([' '], { width: 200, height: 100 }));
  const out = await convert({ file: blank, name: 'blank.png', mode: 'markdown', limits });
  t.deepEqual(out, { nodes: [{ name: 'blank.md', type: 'markdown', content: '' }], warnings: ['OCR found no text in the image'] });
  const junk = work.path('junk.png');
  writeFileSync(junk, 'not an image');
  const err = await t.throwsAsync(convert({ file: junk, name: 'junk.png', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(err.code, 'corrupt');
});

test('an image with too many pixels is refused from its header, before decoding', async (t) => {
  const png = textPng(['A'], { scale: 1, width: 40, height: 40 });
  png.writeUInt32BE(50_000, 16);
  png.writeUInt32BE(50_000, 20);
  const file = work.path('huge.png');
  writeFileSync(file, png);
  const err = await t.throwsAsync(convert({ file, name: 'huge.png', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
  t.regex(err.message, /50000 × 50000/);
});

test('image sizes are read from PNG, JPEG and WebP headers', (t) => {
  t.deepEqual(imageSize(textPng(['A'], { scale: 1, width: 30, height: 20 })), { width: 30, height: 20, type: 'png' });
  // JPEG: SOI, an APP0 segment, then a baseline frame header (SOF0) of 640 × 480.
  const jpeg = Buffer.from('ffd8ffe000104a46494600010100000100010000ffc000110801e002800301220002110103110100', 'hex');
  t.deepEqual(imageSize(jpeg), { width: 640, height: 480, type: 'jpeg' });
  const webp = Buffer.alloc(30);
  webp.write('RIFF', 0, 'latin1');
  webp.write('WEBPVP8X', 8, 'latin1');
  webp.writeUIntLE(1919, 24, 3);
  webp.writeUIntLE(1079, 27, 3);
  t.deepEqual(imageSize(webp), { width: 1920, height: 1080, type: 'webp' });
  t.is(imageSize(Buffer.from('GIF89a')), null);
});
