import { spawnSync } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A network namespace of the test's own (`ip netns`, root only), joined to the host by a veth
 * pair on a /24 of 10.231.0.0/16, so that a test can cut one process off the network and join it
 * again. The host side has two addresses: `hostAddress` (where the rest of the cluster listens)
 * and `clientAddress` (the test's own requests to the namespace, bound with `localAddress`). The
 * namespace side has `innerAddress`. `partition()` routes `hostAddress` to a blackhole inside the
 * namespace: nothing crosses between it and the namespace any more, in either direction (a reply
 * is dropped as well, and a connect from inside fails at once), while the test still reaches the
 * namespace from `clientAddress`. `heal()` removes that route.
 *
 * Names carry the test process's pid (`cnsp<pid>`), so parallel runs never share one; the /24 is
 * claimed by a file under the temp folder, created exclusively. A namespace is removed by
 * `remove()`, and in any case when the test process exits; one left by a process that is gone
 * (killed before its exit hook ran) is removed by the next run that creates one.
 */
export interface NetNamespace {
  name: string;
  hostAddress: string;
  clientAddress: string;
  innerAddress: string;
  /** The command prefix that runs a program inside the namespace (`ip netns exec <name>`). */
  exec: string[];
  partition(): void;
  heal(): void;
  /** Deletes the namespace and its veth pair, and releases the /24; safe to call twice. Kill the processes inside first. */
  remove(): void;
}

const PREFIX = 'cnsp';
const CLAIMS = join(tmpdir(), 'cns-netns');
const made = new Set<NetNamespace>();
let hooked = false;
let count = 0;

export function createNetNamespace(): NetNamespace {
  removeStale();
  const name = `${PREFIX}${process.pid}${count++ === 0 ? '' : `x${count}`}`;
  const subnet = claimSubnet(name);
  const net = `10.231.${subnet}`;
  const [hostIf, innerIf] = [`${name}h`, `${name}n`];
  const ns: NetNamespace = {
    name,
    hostAddress: `${net}.1`,
    clientAddress: `${net}.3`,
    innerAddress: `${net}.2`,
    exec: ['ip', 'netns', 'exec', name],
    partition: () => ip('-n', name, 'route', 'add', 'blackhole', `${net}.1/32`),
    heal: () => ip('-n', name, 'route', 'del', 'blackhole', `${net}.1/32`),
    remove() {
      if (!made.delete(ns)) return;
      deleteNamespace(name);
      rmSync(join(CLAIMS, String(subnet)), { force: true });
    },
  };
  made.add(ns);
  hookExit();
  try {
    ip('netns', 'add', name);
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', innerIf);
    ip('link', 'set', innerIf, 'netns', name);
    ip('addr', 'add', `${ns.hostAddress}/24`, 'dev', hostIf);
    ip('addr', 'add', `${ns.clientAddress}/24`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    ip('-n', name, 'addr', 'add', `${ns.innerAddress}/24`, 'dev', innerIf);
    ip('-n', name, 'link', 'set', innerIf, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
  } catch (err) {
    ns.remove();
    throw err;
  }
  return ns;
}

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.error) throw new Error(`ip ${args.join(' ')}: ${r.error.message} (the network partition tests need iproute2 and root)`);
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()} (the network partition tests need iproute2 and root)`);
}

/** The namespace and its veth pair (deleting the host end deletes both, even while a process still holds the namespace). Never throws. */
function deleteNamespace(name: string): void {
  spawnSync('ip', ['link', 'del', `${name}h`], { stdio: 'ignore' });
  spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
}

/** The first free /24 from one the pid picks: a file named after it, created exclusively, holds the namespace's name. */
function claimSubnet(name: string): number {
  mkdirSync(CLAIMS, { recursive: true });
  for (let i = 0; i < 250; i++) {
    const subnet = 1 + ((process.pid + i) % 250);
    let fd: number;
    try {
      fd = openSync(join(CLAIMS, String(subnet)), 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    writeSync(fd, name);
    closeSync(fd);
    return subnet;
  }
  throw new Error(`no free 10.231.x.0/24 for a test network namespace (claims in ${CLAIMS})`);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};
const pidOf = (name: string) => Number(/^cnsp(\d+)(?:x\d+)?$/.exec(name)?.[1] ?? NaN);

/** Namespaces and claims of test processes that are gone. */
function removeStale(): void {
  let claims: string[] = [];
  try {
    claims = readdirSync(CLAIMS);
  } catch {
    /* none yet */
  }
  for (const file of claims) {
    let name = '';
    try {
      name = readFileSync(join(CLAIMS, file), 'utf8');
    } catch {
      continue;
    }
    const pid = pidOf(name);
    // A claim being written has no name yet: only a named one of a dead process is stale.
    if (Number.isNaN(pid) || alive(pid)) continue;
    deleteNamespace(name);
    rmSync(join(CLAIMS, file), { force: true });
  }
  const listed = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  for (const line of listed.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const pid = pidOf(name);
    if (!Number.isNaN(pid) && !alive(pid)) deleteNamespace(name);
  }
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const ns of [...made]) ns.remove();
  });
}
