// The pre-receive hook's body: sends the ref updates and the quarantine folder to the service
// that started this push and relays its verdict. Plain JavaScript so that it starts fast.
import { readFileSync } from 'node:fs';

const url = process.env.CNS_HOOK_URL;
const secret = process.env.CNS_PUSH_SECRET;
if (!url || !secret) {
  process.stderr.write('cns: this repository accepts pushes only through the cns service.\n');
  process.exit(1);
}

const updates = readFileSync(0, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [oldOid, newOid, ref] = line.split(' ');
    return { oldOid, newOid, ref };
  });

try {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-cns-push-secret': secret },
    body: JSON.stringify({ updates, quarantine: process.env.GIT_QUARANTINE_PATH ?? '' }),
  });
  const verdict = await res.json();
  for (const line of verdict.problems ?? []) process.stderr.write(`cns: ${line}\n`);
  process.exit(res.ok && verdict.ok === true ? 0 : 1);
} catch (e) {
  process.stderr.write(`cns: could not check this push with the service (${e?.message ?? e}); nothing was changed.\n`);
  process.exit(1);
}
