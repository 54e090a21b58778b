import { ValidationError } from '../errors/contentErrors.ts';
import type { NodeType } from './types.ts';

/** Top-level folder holding soft-deleted nodes. It is a plain git tree, not an indexed node. */
export const TRASH_DIR = '.trash';

/**
 * Git cannot store an empty tree entry, so an empty folder holds one empty file with this name.
 * It is hidden from every listing, never indexed, and reserved (writing it is a validation error).
 * A `git clone` shows it as an empty `.cnskeep` file, the same convention as `.gitkeep`.
 */
export const PLACEHOLDER = '.cnskeep';

const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 1024;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Code points HFS+ ignores when it compares names, so `.g\u200cit` opens `.git` there; git skips
 * the same list in its is_hfs_dotgit check.
 */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Why git itself refuses `name` as a path component (its verify_path and fsck `hasDotgit`
 * rules, with the NTFS and HFS+ protections on as on a server), or null when it is fine:
 * - `.git` in any case (NTFS and HFS+ are case-insensitive);
 * - on NTFS: `.git` or its 8.3 short name `git~1`, followed only by spaces and dots (which
 *   NTFS drops) up to the end or a `:` (an alternate data stream: `.git::$INDEX_ALLOCATION`);
 * - on HFS+: `.git` once the ignored code points above are removed;
 * - a backslash anywhere: NTFS reads it as a separator (git refuses it on Windows, and its
 *   NTFS check looks for `.git` after each one), so `a\.git` or `..\x` would escape on a clone.
 * With `symlink`, also what git refuses for symbolic links: `.gitmodules` and its NTFS short
 * names and HFS+ spellings.
 */
export function gitNameProblem(name: string, options: { symlink?: boolean } = {}): string | null {
  if (name.includes('\\')) return 'may not contain a backslash';
  if (isNtfsDotGeneric(name, 'git', 'git~1') || isHfsDot(name, 'git')) return 'may not contain .git or a name git reads as .git';
  if (options.symlink && (isNtfsDotGeneric(name, 'gitmodules', 'gi7eba') || isHfsDot(name, 'gitmodules'))) {
    return 'may not link .gitmodules';
  }
  return null;
}

/** `.<needle>` (any case) or NTFS short names of it, then only spaces/dots up to the end or ':'. */
function isNtfsDotGeneric(name: string, needle: string, shortPrefix: string): boolean {
  const lower = name.toLowerCase();
  if (needle === 'git') {
    if (lower.startsWith('.git') && onlyTrailing(name, 4)) return true;
    return lower.startsWith('git~1') && onlyTrailing(name, 5);
  }
  if (lower.startsWith('.' + needle) && onlyTrailing(name, needle.length + 1)) return true;
  // The regular short name: the first 6 characters, then ~1 to ~4.
  if (lower.startsWith(needle.slice(0, 6)) && /^~[1-4]/.test(name.slice(6)) && onlyTrailing(name, 8)) return true;
  // The fall-back short name: a hashed prefix, ~ and digits, 8 characters in all.
  const m = /^([^~]{0,6})~([1-9][0-9]*)/.exec(name.slice(0, 8));
  if (name.length < 8 || !m || m[0].length !== 8 || /[^\x00-\x7f]/.test(m[1])) return false;
  return shortPrefix.startsWith(m[1].toLowerCase()) && m[1].length > 0 && onlyTrailing(name, 8);
}

/**
 * Only spaces and dots from `from` up to the end or a ':'. A module function, not a closure:
 * every path segment of every request is checked, and tsx names each closure it creates.
 */
function onlyTrailing(name: string, from: number): boolean {
  return /^[ .]*(:|$)/.test(name.slice(from));
}

/** `.<needle>` as HFS+ compares names: ignorable code points skipped, ASCII case folded. */
function isHfsDot(name: string, needle: string): boolean {
  const folded = name.replace(HFS_IGNORED, '');
  return folded.length === needle.length + 1 && folded[0] === '.' && /^[\x00-\x7f]*$/.test(folded) && folded.slice(1).toLowerCase() === needle;
}

/**
 * Normalizes a user path ("/a//b/" is rejected, "a/b" kept; leading/trailing slashes are
 * trimmed once) and rejects anything unsafe. The empty string is the project root.
 */
export function normalizePath(input: unknown, field = 'path'): string {
  if (typeof input !== 'string') throw new ValidationError(`${field} must be a string`, { field });
  let p = input;
  if (p.startsWith('/')) throw new ValidationError(`${field} must be relative`, { field, path: input });
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (p === '' || p === '.') return '';
  if (CONTROL.test(p)) throw new ValidationError(`${field} contains control characters`, { field, path: input });
  // A lone surrogate has no UTF-8 form: git would store U+FFFD while the index kept the original.
  if (LONE_SURROGATE.test(p)) throw new ValidationError(`${field} is not valid Unicode (a lone surrogate)`, { field });
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) {
    throw new ValidationError(`${field} is longer than ${MAX_PATH_BYTES} bytes`, { field });
  }
  for (const seg of p.split('/')) {
    if (seg === '') throw new ValidationError(`${field} has an empty segment`, { field, path: input });
    if (seg === '.' || seg === '..') throw new ValidationError(`${field} may not contain . or ..`, { field, path: input });
    const refused = gitNameProblem(seg);
    if (refused) throw new ValidationError(`${field} ${refused}`, { field, path: input });
    if (Buffer.byteLength(seg) > MAX_NAME_BYTES) {
      throw new ValidationError(`a name in ${field} is longer than ${MAX_NAME_BYTES} bytes`, { field });
    }
  }
  return p;
}

/** A path that a write/mkdir/move target may use: not the root, not in the trash, not reserved. */
export function normalizeTargetPath(input: unknown, field = 'path'): string {
  const p = normalizePath(input, field);
  if (p === '') throw new ValidationError(`${field} may not be the project root`, { field });
  if (isTrashPath(p) || p === TRASH_DIR) {
    throw new ValidationError(`${field} may not be inside ${TRASH_DIR}`, { field, path: p });
  }
  if (baseName(p) === PLACEHOLDER) throw new ValidationError(`${PLACEHOLDER} is a reserved name`, { field, path: p });
  return p;
}

export function isTrashPath(p: string): boolean {
  return p.startsWith(TRASH_DIR + '/');
}

export function parentPath(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

export function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

export function joinPath(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

/** True when `p` is `dir` itself or lies inside it. */
export function isSameOrInside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir + '/');
}

/** Type for content that arrives without one (a pushed file). */
export function typeFromName(name: string): Exclude<NodeType, 'folder'> {
  const ext = extension(name);
  if (ext === 'json') return 'json';
  if (ext === 'md' || ext === 'markdown') return 'markdown';
  return 'file';
}

const MIME: Record<string, string> = {
  json: 'application/json',
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  ts: 'text/plain',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  webm: 'video/webm',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

/** Mime type by extension; the node type decides for json/markdown whatever the name. */
export function mimeTypeFor(type: NodeType, name: string): string | null {
  if (type === 'folder') return null;
  if (type === 'json') return 'application/json';
  if (type === 'markdown') return 'text/markdown';
  return MIME[extension(name)] ?? 'application/octet-stream';
}

function extension(name: string): string {
  const i = name.lastIndexOf('.');
  return i <= 0 ? '' : name.slice(i + 1).toLowerCase();
}

/** Project ids become directory names: keep them to a safe alphabet. */
export function assertProjectId(projectId: unknown): asserts projectId is string {
  if (typeof projectId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(projectId) || projectId.includes('..')) {
    throw new ValidationError('invalid project id', { projectId });
  }
}
