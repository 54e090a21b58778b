import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const RELAY = fileURLToPath(new URL('./inspectorRelay.mjs', import.meta.url));

/** A free loopback port (for `--inspect=127.0.0.1:<port>`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

/**
 * A DevTools Protocol session with a process started with `--inspect`: how a benchmark reads a
 * server's own memory figures, or has it collect garbage, without anything in the service for it.
 */
export class Inspector {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(private readonly relay: ChildProcess) {
    relay.on('message', (m: { id?: number; result?: unknown; error?: { message: string } }) => {
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id!);
      if (m.error) p.reject(new Error(m.error.message));
      else p.resolve(m.result);
    });
  }

  static async open(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const relay = fork(RELAY, [targets[0]!.webSocketDebuggerUrl], { execArgv: ['--experimental-websocket', '--no-warnings'] });
    await new Promise<void>((resolve, reject) => {
      relay.once('message', (m: { ready?: boolean; failed?: string }) => (m.ready ? resolve() : reject(new Error(`inspector: ${m.failed}`))));
      relay.once('exit', (code) => reject(new Error(`inspector relay exited with ${code}`)));
    });
    return new Inspector(relay);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.relay.send({ id, method, params });
    });
  }

  /** The value of an expression evaluated in the process's main context (`process` is a global there). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = await this.send<{ result: { value: T }; exceptionDetails?: { text: string } }>('Runtime.evaluate', { expression, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`inspector: ${r.exceptionDetails.text}`);
    return r.result.value;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.relay.once('exit', () => resolve());
      this.relay.disconnect();
    });
  }
}
