import type { Command } from 'commander';
import { ExitCode } from './exitCodes.ts';

/**
 * The options every client command takes, accepted anywhere on the line: `cns --server X ls`,
 * `cns keys --json ls` and `cns ls --server X` are the same. An option given after the command
 * wins over the same one given before it.
 */
const GLOBAL_OPTIONS: [flags: string, description: string][] = [
  ['--server <url>', 'server address (CNS_SERVER; default: the last `cns login`)'],
  ['--token <token>', 'access token or key (CNS_TOKEN; default: the stored sign-in)'],
  ['-p, --project <project>', 'project id or name (CNS_PROJECT; default: `cns use`)'],
  ['--json', 'print machine-readable JSON on stdout'],
];

/**
 * Declares the global options: on the program and on command groups (`keys`, `projects`) to be
 * handed down, and on each client command (without --project for those that take none).
 */
export function globalOptions(cmd: Command, options: { project?: boolean } = {}): Command {
  for (const [flags, description] of GLOBAL_OPTIONS) if (options.project !== false || !flags.includes('--project')) cmd.option(flags, description);
  return cmd;
}

const commandLine = (cmd: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/**
 * Hands the command that runs the global options given before it (on the program or a group),
 * unless it was given the same option itself. A command that does not take one refuses it as a
 * usage error rather than ignoring it.
 */
export function applyGlobalOptions(action: Command): void {
  const before: Command[] = [];
  for (let c = action.parent; c; c = c.parent) before.unshift(c);
  for (const holder of before) {
    for (const [key, value] of Object.entries(holder.opts())) {
      if (holder.getOptionValueSource(key) !== 'cli') continue;
      const option = action.options.find((o) => o.attributeName() === key);
      if (!option) {
        const flag = holder.options.find((o) => o.attributeName() === key)?.long ?? key;
        action.error(`${flag} is not an option of \`${commandLine(action)}\``, { exitCode: ExitCode.USAGE, code: 'cns.globalOption' });
      }
      if (action.getOptionValueSource(key) !== 'cli') action.setOptionValueWithSource(key, value, 'cli');
    }
  }
}

/**
 * On a usage error every command prints its own command line and where its help is, instead of
 * the whole help: `usage: cns ls [options] [path]` / ``see `cns ls --help` ``.
 */
export function shortUsageHints(cmd: Command): void {
  const line = commandLine(cmd);
  cmd.showHelpAfterError(`usage: ${line} ${cmd.usage()}\nsee \`${line} --help\``);
  for (const sub of cmd.commands) shortUsageHints(sub);
}
