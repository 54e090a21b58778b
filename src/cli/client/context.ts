import type { Command } from 'commander';
import { ACCESS_KEY_PREFIX } from '../../auth/accessKeys.ts';
import type { CliIo } from '../io.ts';
import { ApiClient } from './apiClient.ts';
import { configPath, defaultProjectOf } from './cliConfig.ts';
import { CliError, Reported, usageError } from './errors.ts';
import { ExitCode } from './exitCodes.ts';
import { globalOptions } from './globalOptions.ts';
import { Output } from './output.ts';
import { resolveProject } from './projectRef.ts';
import { resolveTarget } from './target.ts';

/** The options every client command takes. */
export interface ClientFlags {
  server?: string;
  token?: string;
  project?: string;
  json?: boolean;
}

/** Adds --server, --token, --json and (for project commands) --project to a command. */
export function clientOptions(cmd: Command, options: { project?: boolean } = {}): Command {
  return globalOptions(cmd, options);
}

/** What a command runs with: the API client for its server, its output, and its project. */
export class CommandContext {
  readonly io: CliIo;
  readonly api: ApiClient;
  readonly out: Output;
  /** The client's settings file (default projects, the last server) for this run's environment. */
  readonly configFile: string;
  private readonly flags: ClientFlags;
  private projectCache: { id: string; name: string } | null = null;

  constructor(flags: ClientFlags, io: CliIo) {
    this.io = io;
    this.flags = flags;
    this.configFile = configPath(io.env);
    this.api = new ApiClient(resolveTarget(flags, io.env));
    this.out = new Output(Boolean(flags.json), io.stdout);
  }

  get server(): string {
    return this.api.server;
  }

  /** --project → CNS_PROJECT → `cns use` for this server → an access key's own project. */
  async project(): Promise<{ id: string; name: string }> {
    if (this.projectCache) return this.projectCache;
    // Signed in first: a server this machine never signed in to has no default project either.
    this.api.requireToken();
    const ref = this.flags.project ?? this.io.env.CNS_PROJECT;
    if (ref) this.projectCache = await resolveProject(this.api, ref);
    else if (this.usesKey) this.projectCache = await this.keyProject();
    else {
      const stored = defaultProjectOf(this.server, this.configFile);
      if (!stored) throw usageError('no project: pass --project PROJECT or set a default with `cns use PROJECT`');
      this.projectCache = stored;
    }
    return this.projectCache;
  }

  /** `/content/{project_id}` + route. */
  async contentPath(route: string): Promise<string> {
    return `/content/${encodeURIComponent((await this.project()).id)}/${route}`;
  }

  /** An access key reaches exactly one project, so it is the default whatever `cns use` says. */
  private get usesKey(): boolean {
    return this.api.tokenValue?.startsWith(ACCESS_KEY_PREFIX) ?? false;
  }

  private async keyProject(): Promise<{ id: string; name: string }> {
    const { data } = await this.api.get<{ connection?: { project_id: string } }>('/auth/me');
    if (!data.connection) throw usageError('no project: pass --project PROJECT or set a default with `cns use PROJECT`');
    return { id: data.connection.project_id, name: data.connection.project_id };
  }
}

function reportError(err: unknown, json: boolean, stderr: CliIo['stderr']): number {
  const e = err instanceof CliError ? err : new CliError((err as Error)?.message ?? String(err));
  if (json) {
    stderr.write(JSON.stringify({ success: false, error: { code: e.code, message: e.message, details: e.details, exit_code: e.exitCode } }) + '\n');
  } else {
    stderr.write(`cns: ${e.message}\n`);
    if (Array.isArray(e.details)) {
      for (const d of e.details as { field?: string; message?: string }[]) if (d?.message) stderr.write(`  ${d.field ? d.field + ': ' : ''}${d.message}\n`);
    }
  }
  return err instanceof CliError ? e.exitCode : ExitCode.FAILURE;
}

/** Runs a command body with its context; a failure is printed on stderr and ends the run with its exit status. */
export async function runClient(io: CliIo, flags: ClientFlags, body: (ctx: CommandContext) => Promise<void>): Promise<void> {
  try {
    await body(new CommandContext(flags, io));
  } catch (err) {
    throw new Reported(reportError(err, Boolean(flags.json), io.stderr));
  }
}
