import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { credentialsPath, normalizeServerUrl } from '../credentials.ts';

/**
 * The client's non-secret settings, beside the credentials file:
 * `$XDG_CONFIG_HOME/cns/config.json` =
 *   { "version": 1, "server": "<server of the last cns login>",
 *     "servers": { "<server>": { "project": { "id": "prj_…", "name": "…" } } } }
 * Kept apart from the tokens so that `cns logout` does not forget the default project.
 */
export interface CliConfig {
  version: 1;
  server?: string;
  servers: Record<string, { project?: { id: string; name: string } }>;
}

export function configPath(env: Record<string, string | undefined>): string {
  return join(dirname(credentialsPath(env)), 'config.json');
}

export function readConfig(path: string): CliConfig {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<CliConfig>;
    if (parsed && typeof parsed.servers === 'object' && parsed.servers) return { version: 1, server: parsed.server, servers: parsed.servers };
  } catch {
    /* absent or damaged: defaults */
  }
  return { version: 1, servers: {} };
}

function writeConfig(config: CliConfig, path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}

export function setCurrentServer(server: string, path: string): void {
  const config = readConfig(path);
  config.server = normalizeServerUrl(server);
  writeConfig(config, path);
}

export function defaultProjectOf(server: string, path: string): { id: string; name: string } | null {
  return readConfig(path).servers[normalizeServerUrl(server)]?.project ?? null;
}

export function setDefaultProject(server: string, project: { id: string; name: string }, path: string): void {
  const config = readConfig(path);
  const key = normalizeServerUrl(server);
  config.servers[key] = { ...config.servers[key], project };
  writeConfig(config, path);
}

/** Forgets the default project of `server` (after that project was deleted). */
export function clearDefaultProject(server: string, path: string): void {
  const config = readConfig(path);
  const entry = config.servers[normalizeServerUrl(server)];
  if (!entry?.project) return;
  delete entry.project;
  writeConfig(config, path);
}
