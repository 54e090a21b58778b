import { invalidField } from '../../errors/domainError.ts';

const MAX_SCOPE_LENGTH = 1024;

/**
 * Normalizes a connection's scope path to the stored form: project-relative, no leading or
 * trailing slash, '' for the whole project. Paths that could name something else than they
 * appear to (`..`, `.`, empty segments, control characters) are refused rather than repaired.
 */
export function parseScopePath(raw: string | undefined | null, field = 'scope_path'): string {
  if (raw === undefined || raw === null) return '';
  if (raw.length > MAX_SCOPE_LENGTH) throw invalidField(field, `must be at most ${MAX_SCOPE_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(raw)) throw invalidField(field, 'must not contain control characters or backslashes');
  const trimmed = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') return '';
  const segments = trimmed.split('/');
  if (segments.some((s) => s === '')) throw invalidField(field, 'must not contain empty segments ("//")');
  if (segments.some((s) => s === '.' || s === '..')) throw invalidField(field, 'must not contain "." or ".." segments');
  return segments.join('/');
}
