import { ApiError } from '../api/client.ts';

/** What to tell the user about a failure: the API envelope's message, else the error's own. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
