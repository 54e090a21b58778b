import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CNS_BIN } from '../helpers/cli.ts';
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

/** A user of the command line: their own config folder (credentials, default project) and environment. */
export class CliUser {
  readonly configHome = mkdtempSync(join(tmpdir(), 'cns-cli-'));
  private readonly env: Record<string, string>;

  constructor(env: Record<string, string> = {}) {
    this.env = env;
  }

  /** Runs `node bin/cns.js ...args` without any CNS_* variable of the test runner leaking in. */
  run(args: string[], options: { input?: string | Buffer; env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CNS_')));
    const child = spawn(process.execPath, [CNS_BIN, ...args], {
      env: { ...clean, XDG_CONFIG_HOME: this.configHome, ...this.env, ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(options.input ?? '');
    return new Promise((resolve) => {
      child.once('close', (code) => {
        const stdoutBytes = Buffer.concat(out);
        const stdout = stdoutBytes.toString('utf8');
        let json: unknown = undefined;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code, stdout, stdoutBytes, stderr, json });
      });
    });
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
