import { DomainError } from '../errors/domainError.ts';
import type { Member } from './messages.ts';

/**
 * A change of a project reached a worker that does not hold the project's lease (it moved, or
 * the request could not be forwarded). Nothing was written; the client may retry at once.
 */
export class NotOwnerError extends DomainError {
  constructor(readonly projectId: string) {
    super('SERVICE_UNAVAILABLE', 'This project is being written by another worker of the service right now; nothing was changed. Retry the request.', { project_id: projectId }, { 'Retry-After': '1' });
  }
}

/** Thrown before any work when a change of a project belongs on another worker: the request is forwarded there. */
export class ForwardToOwner extends Error {
  /** The request is counted (usage analytics) where it runs, not here. */
  readonly countedElsewhere = true;
  constructor(
    readonly projectId: string,
    readonly member: Member,
  ) {
    super(`project ${projectId} is written by ${member.name}`);
  }
}
