import { fileURLToPath } from 'node:url';

/** The hooks every served repository runs, wherever the repository was created. */
export const HOOKS_DIR = fileURLToPath(new URL('./hooks', import.meta.url));

/**
 * Configuration given to the system git through GIT_CONFIG_COUNT/KEY/VALUE (git >= 2.31), so
 * repositories need no per-repo setup: they inherit the push rules whoever created them.
 */
const SERVED_CONFIG: [string, string][] = [
  ['core.hooksPath', HOOKS_DIR],
  ['http.receivepack', 'true'],
  ['receive.denyNonFastForwards', 'true'],
  ['receive.denyDeletes', 'true'],
  // Malformed objects would be indexed as nonsense: refuse them before the pre-receive hook runs.
  ['receive.fsckObjects', 'true'],
  // ... except `.git` names, which the pre-receive hook refuses in the API's own words.
  ['receive.fsck.hasDotgit', 'ignore'],
  // Maintenance is the store's (under the project's lock): a `gc --auto` started by a push would
  // repack concurrently with it and leave two packs with a bitmap each (every clone warns).
  ['receive.autogc', 'false'],
  // Pushes to refs/for/main are merged into main by the service (hooks/proc-receive).
  ['receive.procReceiveRefs', 'refs/for/main'],
  ['gc.auto', '0'],
  ['uploadpack.allowFilter', 'true'],
  ['uploadpack.allowAnySHA1InWant', 'false'],
];

export function gitConfigEnv(extra: [string, string][] = []): Record<string, string> {
  const all = [...SERVED_CONFIG, ...extra];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(all.length) };
  all.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/**
 * The environment of every git process the service starts: no terminal prompts, no user or
 * system configuration that could change what is served (hooks, aliases, credential helpers).
 */
export function baseGitEnv(): Record<string, string> {
  const env: Record<string, string> = {
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  for (const k of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}
