import { invalidField } from '../../errors/domainError.ts';
import { API_PREFIX } from '../../config/apiPrefix.ts';

/** The address providers send the browser back to; register it with each OAuth app. */
export const callbackUrlOf = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, '')}${API_PREFIX}/oauth/callback`;

/**
 * Where the browser may be sent after the callback: a path of this service, or an absolute
 * address of the same origin as its public URL. Anything else (another host, `//host`, `/\host`,
 * `javascript:`) would make the callback an open redirect and is refused (422). Resolving first
 * and comparing origins covers the spellings browsers accept. Returns the absolute address.
 */
export function checkedRedirect(value: string, publicUrl: string): string {
  const refuse = (why: string) => invalidField('redirect_uri', `redirect_uri ${why}: give a path (/app/settings) or an address on ${new URL(publicUrl).origin}.`);
  if (value.length > 2048) throw refuse('is too long');
  if (/[\u0000-\u001f\u007f\\]/.test(value)) throw refuse('contains control characters or backslashes');
  let target: URL;
  try {
    target = new URL(value, publicUrl);
  } catch {
    throw refuse('is not an address');
  }
  if ((target.protocol !== 'http:' && target.protocol !== 'https:') || target.origin !== new URL(publicUrl).origin) throw refuse('leaves this service');
  if (target.username || target.password) throw refuse('carries credentials');
  return target.toString();
}
