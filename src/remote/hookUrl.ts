import type { Socket } from 'node:net';

let hookBase: string | null = null;

/**
 * Several workers: a push's hooks call back to the worker that runs the push (its private
 * loopback listener), not to the public port, which any worker may answer.
 */
export function useHookAddress(base: string): void {
  hookBase = base.replace(/\/+$/, '');
}

/** Where the hook sends its ref updates; handled by the same middleware as the git routes. */
export const HOOK_PATH = '/git/_hooks/pre-receive';

/**
 * The address the push arrived on is one this process listens on and that is reachable from
 * this machine, whatever host and port the service was configured with.
 */
export function hookUrl(socket: Socket): string {
  if (hookBase) return hookBase + HOOK_PATH;
  let host = socket.localAddress ?? '127.0.0.1';
  if (host.startsWith('::ffff:')) host = host.slice(7);
  if (host === '0.0.0.0' || host === '::') host = '127.0.0.1';
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${socket.localPort}${HOOK_PATH}`;
}
