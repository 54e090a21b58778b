/** Where the working folder appears inside a sandbox, and the command's cwd. */
export const SANDBOX_WORKDIR = '/work';

/** The fixed environment of every command, in both runtimes: nothing of the service's environment gets in. */
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
  HOME: '/tmp',
  LANG: 'C.UTF-8',
  TERM: 'dumb',
  TMPDIR: '/tmp',
};
