import { createHmac } from 'node:crypto';

/**
 * The anonymous key of `GET /auth/config`: a public, stable identifier of this deployment
 * (derived from its signing secret), meant for realtime clients. It grants nothing. A client
 * may send it as `apikey` (header or query) with `GET /events` to make sure it reached the
 * deployment it was configured for: a different value is refused. As a bearer credential it is
 * refused with a message saying so.
 */
export function anonKeyOf(signingSecret: Uint8Array): string {
  return 'cns_anon_' + createHmac('sha256', signingSecret).update('anon').digest('base64url').slice(0, 24);
}

export const ANON_KEY_IS_NOT_A_CREDENTIAL =
  'The anonymous key (anon_key of GET /auth/config) only identifies this server to realtime clients and grants no access: send a sign-in token or an access key.';
