/**
 * The token a git client sent: the password of HTTP Basic (any user name, so `cns:<token>`,
 * `x:<token>` or `<token>:` with the token as user all work), or a Bearer token.
 */
export function gitToken(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (bearer) return bearer[1]!;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (!basic) return null;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return decoded || null;
  const password = decoded.slice(colon + 1);
  // `https://<token>@host/...` puts the token in the user name and leaves the password empty.
  return password || decoded.slice(0, colon) || null;
}

