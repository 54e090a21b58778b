/**
 * Exit statuses of the client commands, distinct per kind of failure so that scripts can
 * react (retry, sign in again, create the missing thing) without parsing messages.
 */
export const ExitCode = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  AUTH: 3,
  NOT_FOUND: 4,
  CONFLICT: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The API's error code → exit status; a rejected request body counts as bad usage. */
export function exitCodeForApiError(code: string): ExitCodeValue {
  switch (code) {
    case 'UNAUTHORIZED':
    case 'FORBIDDEN':
      return ExitCode.AUTH;
    case 'NOT_FOUND':
      return ExitCode.NOT_FOUND;
    case 'CONFLICT':
      return ExitCode.CONFLICT;
    case 'VALIDATION_ERROR':
    case 'PAYLOAD_TOO_LARGE':
      return ExitCode.USAGE;
    default:
      return ExitCode.FAILURE;
  }
}

/** The exit statuses as `cns --help` lists them. */
export const exitCodesHelp = `Exit status:
  0  success
  1  other failure (server unreachable, server error, rate limited)
  2  usage error (bad arguments or options, or input the server rejected)
  3  authentication or permission error (not signed in, bad credentials, forbidden)
  4  not found (path, project, key, trash item)
  5  conflict (the path exists, or --base-version is no longer current)`;
