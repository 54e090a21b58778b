import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

interface Job {
  line: string;
  label: string;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Runs the pool's system programs (mount, umount, cp, chown) through a few long-lived `sh`
 * processes instead of spawning each from Node: a spawn holds the event loop while it forks and
 * execs (5-10 ms per call here), a line written to a shell does not. Each shell runs one program
 * at a time; a job goes to the shell with the shortest queue. With `enter` (a MountNamespace's),
 * the shells run inside that mount namespace.
 */
export class HostShell {
  private readonly shells: Shell[] = [];

  constructor(
    private readonly count = 2,
    private readonly enter: readonly string[] = [],
  ) {}

  /** Runs `program args…` to the end; rejects with its output when it fails. */
  run(program: string, args: string[]): Promise<void> {
    // One job is one line: a line break in an argument would end it early.
    if ([program, ...args].some((a) => /[\n\r\0]/.test(a))) return Promise.reject(new Error(`${program}: an argument holds a line break`));
    while (this.shells.length < this.count) this.shells.push(new Shell(this.enter));
    const shell = this.shells.reduce((a, b) => (b.load < a.load ? b : a));
    const command = [program, ...args].map(quote).join(' ');
    return new Promise((resolve, reject) => {
      shell.submit({
        // Output only on failure; the record separator then the exit status ends every job.
        line: `out=$(${command} 2>&1 </dev/null); rc=$?; [ $rc -eq 0 ] || printf '%s\\n' "$out"; printf '\\036%s\\n' $rc\n`,
        label: `${program} ${args.join(' ')}`,
        resolve,
        reject,
      });
    });
  }

  close(): void {
    for (const s of this.shells) s.close();
    this.shells.length = 0;
  }
}

class Shell {
  private child: ChildProcessWithoutNullStreams | null = null;
  private readonly queue: Job[] = [];
  private out = '';

  constructor(private readonly enter: readonly string[]) {}

  get load(): number {
    return this.queue.length;
  }

  submit(job: Job): void {
    const child = this.child ?? this.start();
    this.queue.push(job);
    if (this.queue.length === 1) this.hold(true);
    child.stdin.write(job.line);
  }

  close(): void {
    this.child?.stdin.end();
    this.child = null;
  }

  private start(): ChildProcessWithoutNullStreams {
    const [file, ...args] = [...this.enter, '/bin/sh', '-s'];
    const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/usr/bin:/sbin:/bin`, LC_ALL: 'C' } });
    this.child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => this.read(text));
    child.stderr.resume();
    child.stdin.on('error', () => undefined);
    const gone = (why: string) => {
      if (this.child === child) this.child = null;
      for (const job of this.queue.splice(0)) job.reject(new Error(`${job.label}: the shell running it ${why}`));
    };
    child.once('error', (e) => gone(`could not start (${e.message})`));
    child.once('close', (code, signal) => gone(`ended (${code ?? signal})`));
    this.hold(false);
    return child;
  }

  /** An idle shell does not keep the process alive; one running a job does. */
  private hold(on: boolean): void {
    const child = this.child;
    if (!child) return;
    for (const h of [child, child.stdin, child.stdout, child.stderr] as unknown as { ref(): void; unref(): void }[]) {
      if (on) h.ref();
      else h.unref();
    }
  }

  private read(text: string): void {
    this.out += text;
    for (;;) {
      const mark = this.out.indexOf('\x1e');
      const end = mark < 0 ? -1 : this.out.indexOf('\n', mark);
      if (end < 0) return;
      const output = this.out.slice(0, mark).trim();
      const rc = Number(this.out.slice(mark + 1, end));
      this.out = this.out.slice(end + 1);
      const job = this.queue.shift();
      if (this.queue.length === 0) this.hold(false);
      if (!job) continue;
      if (rc === 0) job.resolve();
      else job.reject(new Error(`${job.label}: ${output.split('\n')[0] || `exit ${rc}`}`));
    }
  }
}

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
