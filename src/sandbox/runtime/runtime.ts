/**
 * A sandbox runtime runs one shell command over a working folder and reports what it printed.
 * Two implementations: `bwrap` (bubblewrap: namespaces, cgroups, an unprivileged uid) and
 * `just-bash` (a bash simulated in JavaScript, in a child Node process, for hosts without
 * bubblewrap). Everything around a run (materializing the folder, comparing it afterwards,
 * writing changes back) is the same for both and lives outside the runtime.
 */
export type RuntimeName = 'bwrap' | 'just-bash';

export interface RunLimits {
  /** Wall time; the whole process tree is killed when it runs out. */
  timeoutMs: number;
  /** Memory of the whole process tree (RAM + swap), bytes. */
  memoryBytes: number;
  /** Processes and threads the command may have at once. */
  maxProcesses: number;
  /** Bytes kept of each of stdout and stderr; the rest is drained and dropped. */
  maxOutputBytes: number;
  /**
   * Disk a run may fill. bwrap: no single file may grow past it (RLIMIT_FSIZE: the writer gets
   * EFBIG or is killed by SIGXFSZ) and /tmp is a tmpfs of this size; the total over many files
   * is not capped by the runtime. just-bash: every byte written counts, past it writes fail with ENOSPC.
   */
  maxDiskBytes: number;
}

/** Where and how a command will run, known before the command is. */
export interface PrepareRequest {
  /** Absolute host path of the working folder; the command's cwd (seen inside as /work for bwrap). */
  workDir: string;
  /** When true the working folder is mounted read-only. */
  readOnly: boolean;
  limits: RunLimits;
}

export interface StartRequest {
  /** `sh -c` command line. */
  command: string;
  stdin?: string;
  /** Aborts the run: the process tree is killed and the result says exitCode 137, timedOut false. */
  signal?: AbortSignal;
  /** Wall time counted from the start; default: the prepared limits' `timeoutMs`. */
  timeoutMs?: number;
}

export interface RunRequest extends PrepareRequest, Omit<StartRequest, 'timeoutMs'> {}

export interface RunResult {
  stdout: string;
  stderr: string;
  /** The command's exit status; 124 when killed at the timeout, 137 when killed otherwise (memory, abort), 128+N for signal N. */
  exitCode: number;
  truncated: { stdout: boolean; stderr: boolean };
  timedOut: boolean;
  /** Time the command ran, from spawn to exit, ms. */
  durationMs: number;
}

export interface SandboxRuntime {
  readonly name: RuntimeName;
  /** Why the runtime is what it is (logged at start-up, shown in GET /sandbox-endpoints/{id}). */
  readonly description: string;
  /**
   * The uid/gid the command runs as on the host, which must be able to write the working folder
   * (the workspace chowns it); null when the command runs as the service's own user.
   */
  readonly owner: { uid: number; gid: number } | null;
  run(request: RunRequest): Promise<RunResult>;
  /**
   * A sandbox made now, waiting for its command: whatever costs time before the command is
   * known (processes, namespaces, mounts, the cgroup) is paid here, off the request's path.
   * Optional: a runtime without it runs everything cold.
   */
  prepare?(request: PrepareRequest): Promise<PreparedRun>;
  /** Stops what the runtime keeps (prepared sandboxes, pooled cgroups, helper processes). */
  close?(): Promise<void>;
}

/** A prepared sandbox: started once with a command, or cancelled. */
export interface PreparedRun {
  /** Runs the command; the wall-time limit counts from here. Once only. */
  start(request: StartRequest): Promise<RunResult>;
  /** Kills the sandbox (a started command too: it then reports exitCode 137) and frees its cgroup; resolves once both are done. */
  cancel(): Promise<void>;
  /** Whether the sandbox ended before it was started (it could not be made): take the cold path instead. */
  readonly ended: boolean;
}
