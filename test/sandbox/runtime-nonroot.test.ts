import test from 'ava';
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { removeFolders, workFolder } from './runtimeHelpers.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const NOBODY = 65534;

/** A root test process can play a service that is not root: the checkout must be readable by others. */
function canRunAsNobody(): boolean {
  if (process.getuid!() !== 0) return false;
  try {
    accessSync('/usr/bin/setpriv', constants.X_OK);
    for (let dir = repo; dir !== dirname(dir); dir = dirname(dir)) if ((statSync(dir).mode & 0o005) !== 0o005) return false;
    return true;
  } catch {
    return false;
  }
}

test.after.always(() => removeFolders());

(canRunAsNobody() ? test : test.skip)('a service that is not root runs bwrap in a user namespace with rlimits instead of cgroups', async (t) => {
  const dir = await workFolder({ owner: { uid: NOBODY, gid: NOBODY } });
  const { stdout } = await promisify(execFile)(
    '/usr/bin/setpriv',
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, '--import=tsx', resolve(here, 'runtimeNonRootScript.ts'), dir],
    { cwd: repo, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp' }, timeout: 60_000 },
  );
  const r = JSON.parse(stdout.trim().split('\n').pop()!);
  t.is(r.uid, NOBODY);
  t.is(r.name, 'bwrap');
  t.is(r.owner, null);
  t.regex(r.description, /as the service's uid 65534 in a user namespace; memory by RLIMIT_AS and process count by RLIMIT_NPROC/);
  t.is(r.write.stdout, `${NOBODY}\n`);
  t.is(r.write.file, 'written\n');
  t.not(r.memory.exitCode, 0);
  t.regex(r.memory.stderr, /MemoryError/);
  t.not(r.disk.exitCode, 0);
  t.true(r.disk.size <= 1024 * 1024);
  t.not(r.network.exitCode, 0);
  t.is(r.network.connections, 0);
  t.true(r.loop.timedOut);
  t.deepEqual(r.leftovers, []);
});
