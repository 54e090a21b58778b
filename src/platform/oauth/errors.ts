import { DomainError } from '../../errors/domainError.ts';
import { ProviderError } from '../runtime/providerError.ts';
import type { CallAnswer } from './providerCall.ts';
import type { ProviderDef } from './providers/types.ts';

/** The provider refused a token (or an authorization code): a 422 naming the field, in the provider's words. */
export class TokenRefused extends DomainError {
  constructor(field: 'token' | 'code', message: string) {
    super('VALIDATION_ERROR', message, [{ field, message }]);
    this.name = 'TokenRefused';
  }
}

/** The two settings an unconfigured provider needs, named in its 422. */
export function unconfigured(def: ProviderDef): DomainError {
  const name = def.client.toUpperCase();
  const settings = [`CNS_OAUTH_${name}_CLIENT_ID`, `CNS_OAUTH_${name}_CLIENT_SECRET`];
  const message = `${def.displayName} OAuth is not configured on this server: set ${settings[0]} and ${settings[1]} (or connect with a personal token: POST /oauth/${def.id}/token).`;
  return new DomainError('VALIDATION_ERROR', message, [{ field: 'provider', message, settings }]);
}

/** An identity check that did not succeed: a refused token (401/403), else a provider failure. */
export function identifyFailed(def: ProviderDef, answer: CallAnswer): Error {
  if (answer.status === 401 || answer.status === 403) return new TokenRefused('token', `${def.displayName} refused the token: ${answer.message()}`);
  return new ProviderError(def.id, answer.status, answer.message());
}

/** A provider failure as the API answers it (502), anything else unchanged. */
export function asUpstream(err: unknown): unknown {
  return err instanceof ProviderError ? new DomainError('UPSTREAM_ERROR', err.message) : err;
}
