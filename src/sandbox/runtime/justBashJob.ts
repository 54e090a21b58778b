import { Bash, InMemoryFs, MountableFs, ReadWriteFs } from 'just-bash';
import { SANDBOX_ENV, SANDBOX_WORKDIR } from './sandboxEnv.ts';
import { LimitedFs, type WriteBudget } from './limitedFs.ts';
import { capText } from './outputCapture.ts';
import type { RunLimits, RunResult } from './runtime.ts';

/** One command for the just-bash child process (structured-clone safe: no signal, no functions). */
export interface JustBashJob {
  command: string;
  stdin?: string;
  workDir: string;
  readOnly: boolean;
  limits: RunLimits;
}

/** What a job reports: exactly a runtime's result (timedOut: just-bash stopped itself at maxExecutionTimeMs, or the child was killed). */
export type JustBashJobResult = RunResult;

/**
 * Runs one command in a fresh just-bash: the real working folder at /work through ReadWriteFs
 * (writes land on disk; no symlinks followed or made; no path leaves the folder), an in-memory
 * / with /tmp around it, no network (no fetch, no curl), no python or js-exec. Loop and command
 * counts are unbounded, as in a real shell: time and memory are the bounds.
 */
export async function runJustBashJob(job: JustBashJob): Promise<JustBashJobResult> {
  const { limits } = job;
  const budget: WriteBudget = { used: 0, max: limits.maxDiskBytes };
  // Everything lives in this process's heap, capped at memoryBytes: just-bash's own limits stop
  // strings, outputs and reads well below it, so that a hog usually gets an error, not an abort.
  const eighth = Math.floor(limits.memoryBytes / 8);
  const work = new ReadWriteFs({ root: job.workDir, maxFileReadSize: eighth, allowSymlinks: false });
  const base = new InMemoryFs();
  await base.mkdir('/tmp', { recursive: true });
  await base.mkdir('/dev', { recursive: true });
  await base.writeFile('/dev/null', '');
  await base.mkdir(SANDBOX_WORKDIR, { recursive: true });
  const fs = new MountableFs({ base: new LimitedFs(base, { readOnly: false, budget, sinks: ['/dev/null'] }) });
  fs.mount(SANDBOX_WORKDIR, new LimitedFs(work, { readOnly: job.readOnly, budget, mountPoint: SANDBOX_WORKDIR }));
  const bash = new Bash({
    fs,
    cwd: SANDBOX_WORKDIR,
    env: { ...SANDBOX_ENV },
    python: false,
    javascript: false,
    executionLimits: {
      maxExecutionTimeMs: limits.timeoutMs,
      maxCommandCount: Number.POSITIVE_INFINITY,
      maxLoopIterations: Number.POSITIVE_INFINITY,
      maxOutputSize: Math.max(limits.maxOutputBytes + 1, eighth),
      maxStringLength: eighth,
      maxHeredocSize: eighth,
      maxLiveBytes: 2 * eighth,
      maxInputBytes: 2 * eighth,
      maxFileSystemBytes: limits.maxDiskBytes,
    },
  });
  const started = performance.now();
  let stdout = '';
  let stderr = '';
  let exitCode: number;
  try {
    const result = await bash.exec(job.command, { stdin: job.stdin ?? '' });
    ({ stdout, stderr, exitCode } = result);
  } catch (err) {
    // Some failures (e.g. a write refused in the middle of a builtin) reject instead of giving an exit code.
    stderr = `sh: ${err instanceof Error ? err.message : String(err)}\n`;
    exitCode = 1;
  }
  const elapsed = performance.now() - started;
  const out = capText(stdout, limits.maxOutputBytes);
  const errOut = capText(stderr, limits.maxOutputBytes);
  return {
    stdout: out.text,
    stderr: errOut.text,
    exitCode,
    truncated: { stdout: out.truncated, stderr: errOut.truncated },
    timedOut: elapsed >= limits.timeoutMs,
    durationMs: Math.round(elapsed),
  };
}
