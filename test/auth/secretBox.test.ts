import test from 'ava';
import { randomBytes } from 'node:crypto';
import { SecretBox, SecretBoxError } from '../../src/auth/secretBox.ts';

const secret = randomBytes(32);

test('a sealed value opens with the same key and record id, and never shows its plaintext', (t) => {
  const box = new SecretBox(secret, 'test');
  const sealed = box.seal('sk-live-SECRET', 'rec_1');
  t.regex(sealed, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
  t.false(sealed.includes('sk-live-SECRET'));
  t.is(box.open(sealed, 'rec_1').toString(), 'sk-live-SECRET');
  t.not(box.seal('sk-live-SECRET', 'rec_1'), sealed, 'a fresh IV each time');
});

test('a wrong record id (AAD), another purpose or another secret cannot open it', (t) => {
  const box = new SecretBox(secret, 'test');
  const sealed = box.seal('value', 'rec_1');
  t.throws(() => box.open(sealed, 'rec_2'), { instanceOf: SecretBoxError });
  t.throws(() => new SecretBox(secret, 'other').open(sealed, 'rec_1'), { instanceOf: SecretBoxError });
  t.throws(() => new SecretBox(randomBytes(32), 'test').open(sealed, 'rec_1'), { instanceOf: SecretBoxError });
});

test('any altered part, or an unknown format, is refused', (t) => {
  const box = new SecretBox(secret, 'test');
  const sealed = box.seal('value', 'rec_1');
  const parts = sealed.split('.');
  for (const i of [1, 2, 3]) {
    const bytes = Buffer.from(parts[i]!, 'base64url');
    bytes[0]! ^= 1;
    const tampered = parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join('.');
    t.throws(() => box.open(tampered, 'rec_1'), { instanceOf: SecretBoxError }, `part ${i}`);
  }
  t.throws(() => box.open(`v2.${parts.slice(1).join('.')}`, 'rec_1'), { instanceOf: SecretBoxError });
  t.throws(() => box.open('garbage', 'rec_1'), { instanceOf: SecretBoxError });
});
