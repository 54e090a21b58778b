import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ListenError } from './listenError.ts';
import type { FirstStart, Member, ToPrimary, ToWorker } from '../cluster/messages.ts';
import { requestLineOf } from './requestHead.ts';
import { routeTarget } from '../cluster/routeTarget.ts';

const HEAD_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 15_000;
const MAX_RESTART_DELAY_MS = 5_000;
/** A worker whose event loop has not answered a ping for this long is hung: it is killed, and restarted. */
const HUNG_AFTER_MS = Number(process.env.CNS_WORKER_HUNG_MS) || 30_000;
const PING_EVERY_MS = Math.min(5_000, HUNG_AFTER_MS / 3);

interface Slot {
  name: string;
  child: ChildProcess | null;
  holder: string;
  port: number;
  ready: boolean;
  restarts: number;
  startedAt: string;
  /** Consecutive quick deaths, for the restart backoff. */
  failures: number;
  /**
   * Connections handed over and not yet confirmed, in order. The primary keeps its copy open
   * until the worker confirms: if the worker dies first, closing the copy resets the client's
   * connection instead of leaving it hanging on a handle nobody reads.
   */
  handedOver: Socket[];
  /** When the worker last answered (a pong or any message). */
  heardAt: number;
}

export interface PrimaryOptions {
  workers: number;
  host: string;
  port: number;
  /** The environment the workers read their settings from (flags already turned into variables). */
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** One line about a worker's life (exits, restarts) for the operator. */
  log: (line: string) => void;
}

export interface RunningPrimary {
  port: number;
  baseUrl: string;
  firstStart: FirstStart | null;
  members(): Member[];
  close(): Promise<void>;
  /** Resolves with the reason when a worker says the whole service must stop (a cluster node whose id another run took); every worker is stopping then. */
  stoppedItself: Promise<string>;
}

/** Kills what is left of a worker's process group (its children); nothing when the group is empty. */
function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing of it is left
  }
}

/** How a worker process is started: the compiled module when there is one, else the TypeScript through tsx. */
function workerEntry(): { module: string; execArgv: string[] } {
  const compiled = fileURLToPath(new URL('./workerMain.js', import.meta.url));
  if (existsSync(compiled)) return { module: compiled, execArgv: [] };
  return { module: fileURLToPath(new URL('./workerMain.ts', import.meta.url)), execArgv: [`--import=${import.meta.resolve('tsx')}`] };
}

/**
 * The primary of `cns serve --workers N`: it holds no content logic and never reads a body. It
 * takes the port, starts the workers (the first alone, so that it migrates, bootstraps and
 * recovers the data folder before any other runs), reads the request line of each new
 * connection and hands the socket, with the bytes read, to a worker: a change of a project to
 * the worker that holds the project's lease (or, for a project nobody holds, the worker holding
 * the fewest), anything else round-robin. It relays the change bus between workers, tells each
 * who is alive, restarts a worker that dies, and on stop lets every worker drain.
 */
export async function startPrimary(o: PrimaryOptions): Promise<RunningPrimary> {
  const server: Server = createServer({ pauseOnConnect: true });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port, o.host, () => resolve());
    });
  } catch (err) {
    throw new ListenError(o.host, o.port, err as NodeJS.ErrnoException);
  }
  const port = (server.address() as AddressInfo).port;
  const secret = randomBytes(24).toString('hex');
  const boot = randomBytes(4).toString('hex');
  const entry = workerEntry();
  const slots: Slot[] = Array.from({ length: o.workers }, (_, i) => ({ name: `w${i + 1}`, child: null, holder: '', port: 0, ready: false, restarts: 0, startedAt: '', failures: 0, handedOver: [], heardAt: 0 }));
  /** Project → the slot whose worker holds (or was just chosen to take) its lease. */
  const placement = new Map<string, string>();
  const held = new Map<string, number>();
  const waiting: [Socket, Buffer, ReturnType<typeof requestLineOf>][] = [];
  let incarnation = 0;
  let watchdog: NodeJS.Timeout | undefined;
  let closing = false;
  let next = 0;

  const ready = () => slots.filter((s) => s.ready && s.child);
  const members = (): Member[] => ready().map((s) => ({ name: s.name, holder: s.holder, pid: s.child!.pid ?? 0, port: s.port, startedAt: s.startedAt, restarts: s.restarts }));
  const tell = (s: Slot, m: ToWorker) => {
    // A worker exiting (its 'exit' not handled yet) cannot take it: without the callback the
    // failed write (EPIPE) is an 'error' event nobody handles, and it ends the primary.
    if (s.child?.connected) s.child.send(m, () => {});
  };
  const announce = () => {
    const list = members();
    for (const s of ready()) tell(s, { t: 'members', members: list });
  };

  const spawn = (slot: Slot, boxStart: boolean, waitBox = false): Promise<FirstStart | null> =>
    new Promise((resolve, reject) => {
      slot.holder = `${boot}.${slot.name}.${++incarnation}`;
      slot.startedAt = new Date().toISOString();
      const child = fork(entry.module, [], {
        cwd: o.cwd,
        execArgv: entry.execArgv,
        env: { ...o.env, CNS_WORKER_NAME: slot.name, CNS_WORKER_HOLDER: slot.holder, CNS_BOX_START: boxStart ? '1' : '0', CNS_WAIT_BOX: waitBox ? '1' : '0', CNS_BOX_SECRET: secret, CNS_PUBLIC_PORT: String(port) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        // A process group of its own: when it dies, the git processes it started die with it (exit below).
        detached: true,
      });
      slot.child = child;
      // A failed fork or IPC write: the 'exit' that follows (if any) restarts the worker.
      child.on('error', (err) => o.log(`cns: worker ${slot.name}: ${err.message}`));
      let settled = false;
      child.on('message', (m: ToPrimary) => {
        slot.heardAt = Date.now();
        switch (m.t) {
          case 'pong':
            return;
          case 'ready':
            slot.heardAt = Date.now();
            slot.port = m.port;
            slot.ready = true;
            announce();
            flush();
            if (!settled) {
              settled = true;
              resolve(m.firstStart);
            }
            baseUrl = m.baseUrl;
            return;
          case 'failed':
            if (!settled) {
              settled = true;
              reject(new Error(m.message));
            }
            return;
          case 'took':
            slot.handedOver.shift()?.destroy();
            return;
          case 'fatal':
            o.log(`cns: ${m.message}: stopping`);
            stopItself(m.message);
            return;
          case 'held':
            placement.set(m.project, slot.name);
            held.set(slot.name, (held.get(slot.name) ?? 0) + 1);
            return;
          case 'bus':
            for (const s of ready()) if (s !== slot) tell(s, { t: 'bus', msg: m.msg });
            return;
          case 'rate':
            for (const s of ready()) if (s !== slot) tell(s, { t: 'rate', takes: m.takes });
        }
      });
      child.on('exit', (code, signal) => {
        const wasReady = slot.ready;
        slot.ready = false;
        slot.child = null;
        // A push's receive-pack it started could still move a ref: nothing it started outlives it,
        // so whoever takes its leases next writes alone (ownership.ts, soleWriterSince).
        killGroup(child.pid);
        for (const s of slot.handedOver.splice(0)) s.destroy();
        // Its leases may be taken now: the process is gone, it can write nothing more.
        for (const [project, name] of placement) if (name === slot.name) placement.delete(project);
        held.delete(slot.name);
        announce();
        if (!settled) {
          settled = true;
          reject(new Error(`worker ${slot.name} exited during start (${signal ?? `code ${code}`})`));
          // The first worker's failure fails the start; any other is restarted like a crash.
          if (boxStart) return;
        }
        if (closing) return;
        const lived = Date.now() - Date.parse(slot.startedAt);
        slot.failures = lived > 10_000 ? 0 : slot.failures + 1;
        const delay = Math.min(MAX_RESTART_DELAY_MS, slot.failures === 0 ? 0 : 100 * 2 ** (slot.failures - 1));
        o.log(`cns: worker ${slot.name} (pid ${child.pid}) ${signal ? `was killed (${signal})` : `exited (code ${code})`}${wasReady ? '' : ' before it was ready'}; restarting it${delay ? ` in ${delay} ms` : ''}`);
        slot.restarts++;
        setTimeout(() => {
          if (!closing) spawn(slot, false).catch((err: Error) => o.log(`cns: worker ${slot.name} did not start: ${err.message}`));
        }, delay).unref();
      });
    });

  const pick = (line: ReturnType<typeof requestLineOf>): Slot | null => {
    const live = ready();
    if (live.length === 0) return null;
    if (line && line !== 'invalid') {
      const target = routeTarget(line.method, line.path, line.query);
      if (target.change && target.project) {
        const name = placement.get(target.project);
        const owner = name && live.find((s) => s.name === name);
        if (owner) return owner;
        // Nobody holds it: the worker holding the fewest projects takes it on this request.
        const least = live.reduce((a, b) => ((held.get(b.name) ?? 0) < (held.get(a.name) ?? 0) ? b : a));
        placement.set(target.project, least.name);
        held.set(least.name, (held.get(least.name) ?? 0) + 1);
        return least;
      }
    }
    return live[next++ % live.length]!;
  };

  const dispatch = (socket: Socket, head: Buffer, line: ReturnType<typeof requestLineOf>) => {
    const slot = pick(line);
    if (!slot) {
      waiting.push([socket, head, line]);
      return;
    }
    slot.handedOver.push(socket);
    // The bytes go in a message of their own: a large message carrying a handle (a first read of
    // 64 KiB, an upload's head and body) was seen never to arrive. Messages keep their order.
    tell(slot, { t: 'head', head: head.toString('latin1') });
    slot.child!.send({ t: 'conn' } satisfies ToWorker, socket, { keepOpen: true }, (err) => {
      if (!err) return;
      slot.handedOver = slot.handedOver.filter((s) => s !== socket);
      socket.destroy();
    });
  };

  const flush = () => {
    for (const [socket, head, line] of waiting.splice(0)) {
      if (socket.destroyed) continue;
      dispatch(socket, head, line);
    }
  };

  server.on('connection', (socket: Socket) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HEAD_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const line = requestLineOf(head);
      if (line === null) return;
      // Not one byte more: pause() alone lets a net.Socket go on reading into its buffer (up to
      // its high-water mark), and those bytes of a large body would never reach the worker.
      (socket as unknown as { _handle?: { readStop?: () => void } })._handle?.readStop?.();
      socket.pause();
      socket.off('data', onData);
      clearTimeout(timer);
      dispatch(socket, head, line);
    };
    socket.on('data', onData);
    socket.on('error', () => clearTimeout(timer));
    socket.on('close', () => clearTimeout(timer));
    socket.resume();
  });

  let stopping: Promise<void> | null = null;
  const close = () => (stopping ??= stopAll());
  let stopItself: (reason: string) => void = () => {};
  const stoppedItself = new Promise<string>((resolve) => {
    stopItself = (reason) => {
      resolve(reason);
      void close();
    };
  });

  let baseUrl = '';
  // The others start beside the first and load meanwhile; they open the data folder once it is
  // ready. The service answers as soon as the first is ready; the others join as they come up.
  const first = spawn(slots[0]!, true);
  const others = slots.slice(1).map((s) => spawn(s, false, true));
  // A worker that fails to start is restarted (and said so) by its exit handler.
  others.forEach((p) => p.catch(() => {}));
  let firstStart: FirstStart | null;
  try {
    firstStart = await first;
    for (const s of slots.slice(1)) tell(s, { t: 'go' });
  } catch (err) {
    await stopAll();
    throw err;
  }

  async function stopAll(): Promise<void> {
    closing = true;
    clearInterval(watchdog);
    // Handed-off connections belong to the workers, which drain them; none is waited for here.
    server.close();
    for (const [socket] of waiting.splice(0)) socket.destroy();
    await Promise.all(
      slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            const child = s.child;
            if (!child) return resolve();
            child.once('exit', () => resolve());
            tell(s, { t: 'stop' });
            setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS).unref();
          }),
      ),
    );
  }

  // A hung worker (an event loop that never returns) would hold its projects' leases forever:
  // the primary kills it, which frees them, and starts it again.
  watchdog = setInterval(() => {
    const now = Date.now();
    for (const s of ready()) {
      if (now - s.heardAt > HUNG_AFTER_MS) {
        o.log(`cns: worker ${s.name} (pid ${s.child!.pid}) has not answered for ${Math.round((now - s.heardAt) / 1000)} s: killing it`);
        s.child!.kill('SIGKILL');
      } else tell(s, { t: 'ping' });
    }
  }, PING_EVERY_MS).unref();

  return { port, baseUrl, firstStart, members, close, stoppedItself };
}
