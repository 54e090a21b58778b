import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clearDefaultProject, defaultProjectOf, setDefaultProject } from '../client/cliConfig.ts';
import { clientOptions, runClient, type ClientFlags, type CommandContext } from '../client/context.ts';
import { CliError, usageError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import { globalOptions } from '../client/globalOptions.ts';
import { formatTime } from '../client/output.ts';
import { listAllProjects, resolveProject, type ProjectSummary } from '../client/projectRef.ts';
import { Prompter } from '../client/prompt.ts';

async function fetchProject(ctx: CommandContext, ref: string): Promise<ProjectSummary> {
  const { id } = await resolveProject(ctx.api, ref);
  return (await ctx.api.get<ProjectSummary>(`/projects/${encodeURIComponent(id)}`)).data;
}

async function list(io: CliIo, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const projects = await listAllProjects(ctx.api);
    const current = defaultProjectOf(ctx.server, ctx.configFile)?.id;
    ctx.out.result({ projects, default_project_id: current ?? null }, () => {
      if (projects.length === 0) return ctx.out.line('No projects yet: create one with `cns projects create NAME`');
      ctx.out.table(
        ['', 'ID', 'NAME', 'ROLE', 'UPDATED'],
        projects.map((p) => [p.id === current ? '*' : '', p.id, p.name, p.role ?? '-', formatTime(p.updated_at)]),
      );
    });
  });
}

/** The organization a new project goes to: --org, else the caller's default organization. */
async function targetOrg(ctx: CommandContext, org?: string): Promise<string> {
  if (org) return org;
  const { data } = await ctx.api.get<{ organizations: { id: string; is_default: boolean; role: string }[] }>('/organizations', { limit: 200 });
  const pick = data.organizations.find((o) => o.is_default) ?? data.organizations[0];
  if (!pick) throw usageError('you belong to no organization yet: pass --org ORG_ID (or sign in to the dashboard once to set up your account)');
  return pick.id;
}

async function create(io: CliIo, name: string, flags: ClientFlags & { org?: string; description?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const body = { name, org_id: await targetOrg(ctx, flags.org), description: flags.description };
    const { data } = await ctx.api.post<ProjectSummary>('/projects', body);
    ctx.out.result(data, () => ctx.out.line(`Created project ${data.name} (${data.id}); make it the default with \`cns use ${data.id}\``));
  });
}

async function remove(io: CliIo, ref: string, flags: ClientFlags & { yes?: boolean }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await fetchProject(ctx, ref);
    if (!flags.yes) {
      const prompter = new Prompter(io);
      if (!prompter.interactive) throw usageError(`deleting project ${project.name} removes all its content: pass --yes to confirm`);
      const typed = await prompter.ask(`Delete project "${project.name}" (${project.id}) and all its content? Type its name to confirm: `);
      if (typed !== project.name) throw new CliError('not deleted: the name did not match', ExitCode.FAILURE, 'CANCELLED');
    }
    const { data, message } = await ctx.api.delete<{ id: string; deleted: boolean }>(`/projects/${encodeURIComponent(project.id)}`);
    if (defaultProjectOf(ctx.server, ctx.configFile)?.id === project.id) clearDefaultProject(ctx.server, ctx.configFile);
    ctx.out.result(data, () => ctx.out.line(`${message}: ${project.name} (${project.id})`));
  });
}

async function use(io: CliIo, ref: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await fetchProject(ctx, ref);
    setDefaultProject(ctx.server, { id: project.id, name: project.name }, ctx.configFile);
    ctx.out.result({ server: ctx.server, project }, () => ctx.out.line(`Default project on ${ctx.server} is now ${project.name} (${project.id})`));
  });
}

/** `cns projects [ls|create|rm]` and `cns use PROJECT` (the default project, kept per server). */
export function registerProjectsCommands(program: Command, io: CliIo): void {
  const projects = globalOptions(program.command('projects').description('list, create and delete projects (`cns projects` lists them)'));
  clientOptions(projects.command('ls', { isDefault: true }).description('list the projects you can see (* marks the default)'), { project: false }).action(withIo(io, list));
  clientOptions(projects.command('create').description('create a project').argument('<name>', 'project name'), { project: false })
    .option('--org <org_id>', 'organization (default: your default organization)')
    .option('--description <text>', 'description')
    .action(withIo(io, create));
  clientOptions(projects.command('rm').description('delete a project and all its content').argument('<project>', 'project id or name'), { project: false })
    .option('-y, --yes', 'do not ask for confirmation')
    .action(withIo(io, remove));
  clientOptions(program.command('use').description('set the default project for this server').argument('<project>', 'project id or name'), { project: false }).action(withIo(io, use));
}
