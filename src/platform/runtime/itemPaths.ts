import { createHash } from 'node:crypto';
import { normalizeTargetPath } from '../../content/paths.ts';

/** Path under a folder ('' is the project root). */
export const joinPath = (folder: string, rel: string): string => (folder === '' ? rel : `${folder}/${rel}`);

/** Whether project path `p` lies in `folder` (strictly below it). */
export const inFolder = (folder: string, p: string): boolean => (folder === '' ? p !== '' && !p.startsWith('.trash/') && p !== '.trash' : p.startsWith(`${folder}/`));

/** `p` relative to `folder` (p inside it). */
export const relativeTo = (folder: string, p: string): string => (folder === '' ? p : p.slice(folder.length + 1));

/**
 * The sync's folder from its config (`path`, default `/<provider>`), as a project path without
 * slashes ('' for the whole project). Throws the store's ValidationError when it is not a path.
 */
export function syncFolder(config: Record<string, unknown>, provider: string): string {
  const raw = typeof config.path === 'string' && config.path.trim() !== '' ? config.path.trim() : `/${provider}`;
  const bare = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  return bare === '' ? '' : normalizeTargetPath(bare, 'config.path');
}

/**
 * A connector's item path made safe to write: segments that the store refuses (`..`, `.git`,
 * control characters, too long) are replaced rather than failing the whole page's commit. An
 * item whose path is unusable gets a name made from its source id.
 */
export function safeItemPath(path: string, sourceId: string, type: 'json' | 'markdown' | 'file'): string {
  const segments = path
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .map((s) => (s === '..' ? '_' : s));
  const candidate = segments.join('/');
  if (candidate !== '') {
    try {
      return normalizeTargetPath(candidate);
    } catch {
      const cleaned = segments.map(cleanSegment).join('/');
      try {
        return normalizeTargetPath(cleaned);
      } catch {
        /* fall through to a name from the id */
      }
    }
  }
  const ext = type === 'json' ? '.json' : type === 'markdown' ? '.md' : '';
  return `item-${createHash('sha256').update(sourceId).digest('hex').slice(0, 16)}${ext}`;
}

function cleanSegment(s: string): string {
  // eslint-disable-next-line no-control-regex
  let out = s.replace(/[\u0000-\u001f\u007f\\]/g, '_').replace(/[\uD800-\uDFFF]/g, '_');
  if (/^\.git/i.test(out) || /^git~1/i.test(out)) out = `_${out}`;
  while (Buffer.byteLength(out) > 200) out = out.slice(0, -1);
  return out === '' || out === '.' || out === '..' ? '_' : out;
}

/** `dir/name (n).ext`: the n-th alternative of a path that is taken. */
export function variantOf(path: string, n: number): string {
  const slash = path.lastIndexOf('/');
  const dir = path.slice(0, slash + 1);
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  return `${dir}${stem} (${n})${ext}`;
}

/** Whether `candidate` is `path` or one of its variants. */
export function isVariantOf(candidate: string, path: string): boolean {
  if (candidate === path) return true;
  const slash = path.lastIndexOf('/');
  if (candidate.slice(0, slash + 1) !== path.slice(0, slash + 1)) return false;
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const rest = candidate.slice(slash + 1);
  return rest.startsWith(`${stem} (`) && rest.endsWith(`)${ext}`) && /^\d+$/.test(rest.slice(stem.length + 2, rest.length - ext.length - 1));
}
