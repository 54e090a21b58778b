import { ExitCode, exitCodeForApiError, type ExitCodeValue } from './exitCodes.ts';

/** A failure the command line reports as one message and an exit status (never a stack trace). */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly code: string;
  readonly details: unknown;

  constructor(message: string, exitCode: ExitCodeValue = ExitCode.FAILURE, code = 'CLI_ERROR', details: unknown = null) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = code;
    this.details = details;
  }
}

/** Ends a run with this exit status; what went wrong has already been printed. */
export class Reported extends Error {
  readonly exitCode: number;

  constructor(exitCode: number) {
    super(`exit status ${exitCode}`);
    this.name = 'Reported';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError(message, ExitCode.USAGE, 'USAGE');
export const authError = (message: string) => new CliError(message, ExitCode.AUTH, 'UNAUTHORIZED');

/** An error envelope from the API: `{success:false, message, error:{code, details}}`. */
export class ApiError extends CliError {
  readonly status: number;

  constructor(status: number, code: string, message: string, details: unknown) {
    super(message, exitCodeForApiError(code), code, details);
    this.name = 'ApiError';
    this.status = status;
  }
}
