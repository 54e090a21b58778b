import { endSession } from '../api/session.ts';

/** Ends the session on the server (the sign-in revoked, its cookies cleared) and in the page. */
export function signOut(): Promise<void> {
  return endSession();
}
