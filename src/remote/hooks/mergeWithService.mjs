// The proc-receive hook's body (git's pkt-line protocol on stdin/stdout): reads the commands for
// refs/for/main, asks the service that started this push to merge them into main, and reports
// each as `ok` (with main's old and new tips) or `ng <reason>`. Messages go to stderr, which git
// shows to the pusher as `remote: ...`. Plain JavaScript so that it starts fast.
const url = process.env.CNS_HOOK_URL?.replace(/pre-receive$/, 'proc-receive');
const secret = process.env.CNS_PUSH_SECRET;

let buffered = Buffer.alloc(0);
let ended = false;
const waiters = [];
process.stdin.on('data', (c) => {
  buffered = Buffer.concat([buffered, c]);
  waiters.splice(0).forEach((w) => w());
});
process.stdin.on('end', () => {
  ended = true;
  waiters.splice(0).forEach((w) => w());
});

/** The next pkt-line as text (newline removed), or null for a flush packet. */
async function readPacket() {
  for (;;) {
    if (buffered.length >= 4) {
      const len = parseInt(buffered.subarray(0, 4).toString('latin1'), 16);
      if (len === 0) {
        buffered = buffered.subarray(4);
        return null;
      }
      if (buffered.length >= len) {
        const line = buffered.subarray(4, len).toString('utf8');
        buffered = buffered.subarray(len);
        return line.replace(/\n$/, '');
      }
    }
    if (ended) throw new Error('git closed the protocol stream');
    await new Promise((r) => waiters.push(r));
  }
}

async function readSection() {
  const lines = [];
  for (let l = await readPacket(); l !== null; l = await readPacket()) lines.push(l);
  return lines;
}

const out = [];
const packet = (s) => {
  const body = Buffer.from(s + '\n', 'utf8');
  out.push(Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body);
};
const flush = () => out.push(Buffer.from('0000', 'latin1'));
const send = () => new Promise((r) => process.stdout.write(Buffer.concat(out.splice(0)), r));

try {
  await readSection(); // version=1 and git's capabilities
  packet('version=1');
  flush();
  await send();
  const commands = (await readSection()).map((l) => {
    const [oldOid, newOid, ref] = l.split(' ');
    return { oldOid, newOid, ref };
  });
  let results;
  if (!url || !secret) {
    process.stderr.write('cns: this repository accepts pushes only through the cns service.\n');
    results = commands.map((c) => ({ ref: c.ref, ok: false, reason: 'not pushed through the cns service' }));
  } else {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cns-push-secret': secret },
        body: JSON.stringify({ updates: commands }),
      });
      const answer = await res.json();
      for (const line of answer.messages ?? []) process.stderr.write(`cns: ${line}\n`);
      results = answer.results ?? [];
    } catch (e) {
      process.stderr.write(`cns: could not merge this push with the service (${e?.message ?? e}); main was not changed.\n`);
      results = [];
    }
  }
  for (const c of commands) {
    const r = results.find((x) => x.ref === c.ref);
    if (!r || !r.ok) {
      packet(`ng ${c.ref} ${(r?.reason ?? 'the service did not merge it').replace(/\n/g, ' ')}`);
      continue;
    }
    packet(`ok ${c.ref}`);
    if (r.refname) packet(`option refname ${r.refname}`);
    if (r.oldOid) packet(`option old-oid ${r.oldOid}`);
    if (r.newOid) packet(`option new-oid ${r.newOid}`);
  }
  flush();
  await send();
  process.exit(0);
} catch (e) {
  process.stderr.write(`cns: ${e?.message ?? e}\n`);
  process.exit(1);
}
