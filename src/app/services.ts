import { join } from 'node:path';
import { AccessTokens } from '../auth/accessTokens.ts';
import { Authenticator } from '../auth/authenticator.ts';
import { RefreshTokens } from '../auth/refreshTokens.ts';
import { loadOrCreateSigningSecret } from '../auth/signingSecret.ts';
import type { Settings } from '../config/settings.ts';
import { openDatabase, type Db } from '../db/database.ts';
import { UserStore } from '../domain/users/userStore.ts';
import { RateLimiter } from '../http/rateLimiter.ts';
import type { Logger } from '../logging/logger.ts';
import { Authorizer } from '../policies/authorize.ts';

/** Everything a request handler may need, built once per process and passed down explicitly. */
export interface Services {
  settings: Settings;
  logger: Logger;
  db: Db;
  signingSecret: Uint8Array;
  users: UserStore;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  authenticator: Authenticator;
  authorizer: Authorizer;
  rateLimiter: RateLimiter;
  loginRateLimiter: RateLimiter;
}

export function createServices(settings: Settings, logger: Logger): Services {
  const db = openDatabase(join(settings.dataDir, 'cns.db'), { fsync: settings.fsync });
  const signingSecret = loadOrCreateSigningSecret(settings.dataDir);
  const users = new UserStore(db);
  const accessTokens = new AccessTokens(signingSecret, settings.accessTokenTtlSeconds);
  return {
    settings,
    logger,
    db,
    signingSecret,
    users,
    accessTokens,
    refreshTokens: new RefreshTokens(db, settings.refreshTokenTtlSeconds),
    authenticator: new Authenticator(db, users, accessTokens),
    authorizer: new Authorizer(db),
    rateLimiter: new RateLimiter(settings.rateLimitMax, settings.rateLimitWindowMs),
    loginRateLimiter: new RateLimiter(settings.loginRateLimitMax, settings.loginRateLimitWindowMs),
  };
}

export async function closeServices(services: Services): Promise<void> {
  services.db.close();
}
