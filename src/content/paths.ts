import { ValidationError } from './errors.ts';
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
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) {
    throw new ValidationError(`${field} is longer than ${MAX_PATH_BYTES} bytes`, { field });
  }
  for (const seg of p.split('/')) {
    if (seg === '') throw new ValidationError(`${field} has an empty segment`, { field, path: input });
    if (seg === '.' || seg === '..') throw new ValidationError(`${field} may not contain . or ..`, { field, path: input });
    if (seg.toLowerCase() === '.git') throw new ValidationError(`${field} may not contain .git`, { field, path: input });
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
