import type { ApiClient } from './apiClient.ts';
import { CliError, usageError } from './errors.ts';
import { ExitCode } from './exitCodes.ts';

export interface ProjectSummary {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  role: string | null;
  created_at: string;
  updated_at: string;
}

const PROJECT_ID = /^prj_[a-z0-9]+$/;

/** Every project the caller sees (the list route pages by at most 200). */
export async function listAllProjects(api: ApiClient): Promise<ProjectSummary[]> {
  const all: ProjectSummary[] = [];
  for (let offset = 0; ; offset += 200) {
    const { data } = await api.get<{ projects: ProjectSummary[]; total: number }>('/projects', { limit: 200, offset });
    all.push(...data.projects);
    if (data.projects.length === 0 || all.length >= data.total) return all;
  }
}

/** A project named by id (`prj_…`) or by its name, as people type them. */
export async function resolveProject(api: ApiClient, ref: string): Promise<{ id: string; name: string }> {
  if (PROJECT_ID.test(ref)) return { id: ref, name: ref };
  const matches = (await listAllProjects(api)).filter((p) => p.name === ref);
  if (matches.length === 1) return { id: matches[0]!.id, name: matches[0]!.name };
  if (matches.length === 0) throw new CliError(`no project named "${ref}" (see \`cns projects\`)`, ExitCode.NOT_FOUND, 'NOT_FOUND');
  throw usageError(`${matches.length} projects are named "${ref}": use the id (${matches.map((p) => p.id).join(', ')})`);
}
