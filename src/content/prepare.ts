import { assertWritableType, encodeContent } from './encoding.ts';
import { PayloadTooLargeError, ValidationError } from '../errors/contentErrors.ts';
import { looseObjectExists } from './git/blobStream.ts';
import { hashObject } from './git/objects.ts';
import type { PreparedMutation } from './mutations.ts';
import { normalizePath, normalizeTargetPath } from './paths.ts';
import type { Actor, Mutation, NodeRef } from './types.ts';

/*
 * Validation of what callers hand the store, done before a call is queued (outside the
 * project's write section): mutations get normalized paths, encoded content and blob ids.
 */

export interface PrepareLimits {
  maxContentBytes: number;
  /** The project's repository (a streamed blob must be stored there already). */
  gitdir: () => string;
}

/** A mutation checked and encoded; a bad one throws a ContentError with `details.index` when `index` is given. */
export function prepareMutation(m: Mutation, index: number | undefined, limits: PrepareLimits): PreparedMutation {
  const at = (e: unknown): never => {
    if (index !== undefined && e instanceof Error && 'details' in e) {
      (e as { details: Record<string, unknown> }).details.index = index;
    }
    throw e;
  };
  try {
    if (!m || typeof m !== 'object') throw new ValidationError('invalid mutation');
    switch (m.op) {
      case 'write': {
        const path = normalizeTargetPath(m.path);
        assertWritableType(m.type);
        const bytes = encodeContent(m.type, m.content);
        if (bytes.length > limits.maxContentBytes) {
          throw new PayloadTooLargeError(`content is larger than ${limits.maxContentBytes} bytes`, {
            path,
            limit: limits.maxContentBytes,
          });
        }
        if (m.baseVersion !== undefined && (!Number.isInteger(m.baseVersion) || m.baseVersion < 0)) {
          throw new ValidationError('base_version must be a non-negative integer');
        }
        // The id is computed here (outside the project's lock); the blob is stored with its commit.
        return { op: 'write', path, type: m.type, bytes, blobId: hashObject('blob', bytes), size: bytes.length, baseVersion: m.baseVersion };
      }
      case 'writeBlob': {
        const path = normalizeTargetPath(m.path);
        if (typeof m.blobId !== 'string' || !looseObjectExists(limits.gitdir(), m.blobId)) {
          throw new ValidationError('the blob was not stored by writeBlobStream', { blob_id: m.blobId });
        }
        if (m.id !== undefined && (typeof m.id !== 'string' || !/^[A-Za-z0-9_-]{8,64}$/.test(m.id))) throw new ValidationError('invalid node id', { id: m.id });
        return { op: 'write', path, type: 'file', blobId: m.blobId, size: m.size, baseVersion: m.baseVersion, id: m.id };
      }
      case 'mkdir':
        return { op: 'mkdir', path: normalizeTargetPath(m.path) };
      case 'move':
        return { op: 'move', from: normalizeTargetPath(m.from, 'old_path'), to: normalizeTargetPath(m.to, 'new_path') };
      case 'remove': {
        const path = normalizePath(m.path);
        if (path === '' || path === '.trash') throw new ValidationError('cannot remove this path', { path });
        return { op: 'remove', path, permanent: m.permanent === true };
      }
      case 'restore': {
        const trashPath = normalizePath(m.trashPath, 'trash_path');
        return { op: 'restore', trashPath, to: normalizeTargetPath(m.to, 'original_path') };
      }
      case 'rollbackNode':
        assertVersion(m.version);
        return { op: 'rollbackNode', node: normalizeRef(m.node), version: m.version };
      case 'rollbackFolder':
        if (typeof m.folderId !== 'string' || m.folderId === '') throw new ValidationError('folder id required');
        assertVersion(m.targetVersion, 'target_version');
        return { op: 'rollbackFolder', folderId: m.folderId, targetVersion: m.targetVersion };
      case 'rollbackProject':
        assertVersion(m.targetVersion, 'target_version');
        return { op: 'rollbackProject', targetVersion: m.targetVersion };
      default:
        throw new ValidationError('unknown mutation', { op: (m as { op?: unknown }).op });
    }
  } catch (e) {
    return at(e);
  }
}

export function assertActor(actor: Actor): void {
  if (!actor || !['user', 'agent', 'sync'].includes(actor.type) || typeof actor.id !== 'string' || !actor.id) {
    throw new ValidationError('invalid actor');
  }
  if (typeof actor.author !== 'string' || !actor.author) throw new ValidationError('actor needs an author');
}

/** An ISO 8601 time at second precision (what git records, and every other time of the index). */
export function isoSeconds(at: string): string {
  const ms = typeof at === 'string' ? Date.parse(at) : NaN;
  if (Number.isNaN(ms)) throw new ValidationError('received_at must be an ISO 8601 time', { received_at: at });
  return new Date(Math.floor(ms / 1000) * 1000).toISOString();
}

export function assertVersion(v: unknown, field = 'version'): asserts v is number {
  if (!Number.isInteger(v) || (v as number) < 1) throw new ValidationError(`${field} must be a positive integer`, { [field]: v });
}

function normalizeRef(ref: NodeRef): NodeRef {
  if (ref && typeof ref === 'object' && 'id' in ref && typeof ref.id === 'string') return { id: ref.id };
  if (ref && typeof ref === 'object' && 'path' in ref) return { path: normalizePath(ref.path) };
  throw new ValidationError('node reference needs a path or an id');
}

