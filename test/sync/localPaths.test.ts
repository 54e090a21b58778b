import test from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { absPath, localPathProblem, trashLocal, writeLocal } from '../../src/cli/sync/localFiles.ts';

test('the sync client refuses project paths that could land outside its folder on any platform', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cns-local-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const refused = [
    '../x.md', 'a/../../x.md', '..', '.', 'a//b', '/etc/passwd', 'a\\..\\..\\x.md', '..\\x', 'C:\\x', 'C:x', 'x:stream',
    'a/.. /b', 'a/.../b', '.git/config', '.GIT./hooks/post-checkout', 'git~1/config', 'a/.g\u200cit/x', 'tab\there',
  ];
  for (const rel of refused) {
    t.truthy(localPathProblem(rel), `${JSON.stringify(rel)} must be refused`);
    t.throws(() => absPath(root, rel), undefined, JSON.stringify(rel));
    await t.throwsAsync(writeLocal(root, rel, Buffer.from('x')), undefined, JSON.stringify(rel));
  }
  t.false(existsSync(join(root, '..', 'x.md')));
  for (const rel of ['a.md', 'notes/plan.md', '.github/workflows/ci.yml', 'with space/x y.md', 'ünï/çødé.md', '.gitignore']) {
    t.is(localPathProblem(rel), null, rel);
    t.true(absPath(root, rel).startsWith(root));
  }
  await writeLocal(root, 'notes/plan.md', Buffer.from('x'));
  t.true(existsSync(join(root, 'notes', 'plan.md')));
  await t.throwsAsync(trashLocal(root, join(root, '.cns', 'trash'), '../notes/plan.md', 'now'));
  t.true(existsSync(join(root, 'notes', 'plan.md')));
});
