import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/cli/runCli.ts';
import { CNS_BIN } from '../helpers/cli.ts';
import { cleanEnv, memoryIo } from '../helpers/cliIo.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string>;
  cwd?: string;
}

function result(code: number | null, stdoutBytes: Buffer, stderr: string): CliResult {
  const stdout = stdoutBytes.toString('utf8');
  let json: unknown = undefined;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stdoutBytes, stderr, json };
}

/** A user of the command line: their own config folder (credentials, default project) and environment. */
export class CliUser {
  readonly configHome = mkdtempSync(join(tmpdir(), 'cns-cli-'));
  private readonly env: Record<string, string>;

  constructor(env: Record<string, string> = {}) {
    this.env = env;
  }

  /** The environment of a run: no CNS_* variable of the test runner leaks in. */
  private envOf(options: RunOptions): Record<string, string | undefined> {
    return { ...cleanEnv(), XDG_CONFIG_HOME: this.configHome, ...this.env, ...options.env };
  }

  /** `cns ...args` in this process (`runCli`, the code the executable runs), with its own streams and environment. */
  async run(args: string[], options: RunOptions = {}): Promise<CliResult> {
    const m = memoryIo({ input: options.input ?? '', env: this.envOf(options), cwd: options.cwd });
    const code = await runCli(args, m.io);
    return result(code, m.stdoutBytes(), m.stderr());
  }

  /** `node bin/cns.js ...args` as a child process: for what is about the process itself (exit status, pipes, start-up). */
  spawn(args: string[], options: RunOptions = {}): Promise<CliResult> {
    const child = spawn(process.execPath, [CNS_BIN, ...args], { env: this.envOf(options), cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(options.input ?? '');
    return new Promise((resolve) => child.once('close', (code) => resolve(result(code, Buffer.concat(out), stderr))));
  }

  /** Signs in with a password piped on stdin, as a script would. */
  async login(server: TestServer, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<CliResult> {
    const r = await this.run(['login', '--server', server.url], { input: `${email}\n${password}\n` });
    if (r.code !== 0) throw new Error(`cns login failed (${r.code}): ${r.stderr}`);
    return r;
  }

  dispose(): void {
    rmSync(this.configHome, { recursive: true, force: true });
  }
}
