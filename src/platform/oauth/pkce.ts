import { calculatePKCECodeChallenge, randomPKCECodeVerifier } from 'openid-client';

/** A PKCE pair (RFC 7636, S256): the verifier stays on the server, the challenge goes in the authorization URL. */
export async function newPkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomPKCECodeVerifier();
  return { verifier, challenge: await calculatePKCECodeChallenge(verifier) };
}
