import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../logging/logger.ts';
import { BwrapRuntime } from './bwrapRuntime.ts';
import { JustBashRuntime } from './justBashRuntime.ts';
import type { RuntimeName, SandboxRuntime } from './runtime.ts';

/** `CNS_SANDBOX`: which runtime to use; `auto` takes bubblewrap when it works here. */
export type RuntimeChoice = 'auto' | RuntimeName;

export const RUNTIME_CHOICES: readonly RuntimeChoice[] = ['auto', 'bwrap', 'just-bash'];

/** Reads `CNS_SANDBOX` (unset or empty = auto); anything else is a configuration error. */
export function parseRuntimeChoice(value: string | undefined): RuntimeChoice {
  if (value === undefined || value === '') return 'auto';
  if ((RUNTIME_CHOICES as readonly string[]).includes(value)) return value as RuntimeChoice;
  throw new Error(`CNS_SANDBOX must be one of ${RUNTIME_CHOICES.join(', ')}, not "${value}"`);
}

/** What the service logs at start-up and shows as an endpoint's `runtime`. */
export function runtimeSummary(runtime: SandboxRuntime): { runtime: RuntimeName; description: string; uid: number | null } {
  return { runtime: runtime.name, description: runtime.description, uid: runtime.owner?.uid ?? null };
}

/**
 * Picks the runtime once at start-up. bubblewrap counts as usable only when a real command runs
 * in it here (kernels or containers may refuse user namespaces even where bwrap is installed):
 * `echo ok > probe` must print nothing unexpected and leave the file in the folder. `bwrap` forced
 * but unusable is a start-up error; `auto` then falls back to just-bash and says why.
 */
export interface SelectOptions {
  /**
   * Where the probe's working folder is made (default: the system temp folder). Pass the folder
   * the workspaces live in, so that a folder the sandbox cannot reach is found at start-up.
   */
  probeDir?: string;
}

export async function selectRuntime(choice: RuntimeChoice, logger?: Logger, options: SelectOptions = {}): Promise<SandboxRuntime> {
  let runtime: SandboxRuntime;
  if (choice === 'just-bash') {
    runtime = new JustBashRuntime('CNS_SANDBOX=just-bash');
  } else {
    const bwrap = await usableBwrap(options.probeDir ?? tmpdir(), logger);
    if (bwrap instanceof BwrapRuntime) {
      runtime = bwrap;
    } else if (choice === 'bwrap') {
      throw new Error(
        `CNS_SANDBOX=bwrap but bubblewrap cannot run commands here: ${bwrap.reason}. ` +
          'Install it (Debian/Ubuntu: apt-get install bubblewrap), allow unprivileged user namespaces, or set CNS_SANDBOX=auto.',
      );
    } else {
      runtime = new JustBashRuntime(`bubblewrap is not usable here (${bwrap.reason})`);
      logger?.warn({ sandbox: runtimeSummary(runtime) }, 'sandbox: bubblewrap not usable, commands run in just-bash');
      return runtime;
    }
  }
  logger?.info({ sandbox: runtimeSummary(runtime) }, `sandbox runtime: ${runtime.name}`);
  return runtime;
}

async function usableBwrap(probeDir: string, logger?: Logger): Promise<BwrapRuntime | { reason: string }> {
  let runtime: BwrapRuntime;
  try {
    runtime = await BwrapRuntime.create({ logger });
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err) };
  }
  let dir: string | null = null;
  try {
    dir = await mkdtemp(join(probeDir, 'cns-sandbox-probe-'));
    if (runtime.owner) await chown(dir, runtime.owner.uid, runtime.owner.gid);
    const result = await runtime.run({
      command: 'echo ok > probe',
      workDir: dir,
      readOnly: false,
      limits: { timeoutMs: 10_000, memoryBytes: 64 * 1024 * 1024, maxProcesses: 64, maxOutputBytes: 4096, maxDiskBytes: 1024 * 1024 },
    });
    const written = await readFile(join(dir, 'probe'), 'utf8').catch(() => '');
    if (result.exitCode !== 0 || written !== 'ok\n') {
      const said = (result.stderr || result.stdout).trim().split('\n')[0] || `exit code ${result.exitCode}`;
      await runtime.close();
      return { reason: `a test command failed: ${said}` };
    }
    return runtime;
  } catch (err) {
    await runtime.close();
    return { reason: `a test command failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}
