// Run by runtime-nonroot.test.ts as an unprivileged user: selects and uses the bwrap runtime
// the way a service not running as root would, and prints what happened as JSON.
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BwrapRuntime } from '../../src/sandbox/runtime/bwrapRuntime.ts';
import { selectRuntime } from '../../src/sandbox/runtime/selectRuntime.ts';

const workDir = process.argv[2]!;
const runtime = (await selectRuntime('bwrap')) as BwrapRuntime;
let connections = 0;
const server = createServer((s) => {
  connections++;
  s.destroy();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;
const limits = { timeoutMs: 5000, memoryBytes: 128 * 1024 * 1024, maxProcesses: 32, maxOutputBytes: 64 * 1024, maxDiskBytes: 1024 * 1024 };
const go = (command: string, extra: { timeoutMs?: number } = {}) =>
  runtime.run({ command, workDir, readOnly: false, limits: { ...limits, ...extra } });
const write = await go('id -u; echo written > out.txt');
const memory = await go('python3 -c "b = bytearray(256 << 20)"');
const disk = await go('head -c 2G /dev/zero > big');
const network = await go(`python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), timeout=2)"`);
const loop = await go('while :; do :; done', { timeoutMs: 500 });
server.close();
console.log(
  JSON.stringify({
    uid: process.getuid!(),
    name: runtime.name,
    owner: runtime.owner,
    description: runtime.description,
    write: { ...write, file: await readFile(join(workDir, 'out.txt'), 'utf8') },
    memory,
    disk: { ...disk, size: (await stat(join(workDir, 'big'))).size },
    network: { ...network, connections },
    loop,
    leftovers: await runtime.leftoverCgroups(),
  }),
);
