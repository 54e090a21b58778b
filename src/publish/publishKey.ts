import { randomBytes } from 'node:crypto';

/**
 * A publish key: `pk_` and 32 URL-safe characters of 24 random bytes (192 bits), so a key cannot be
 * guessed or enumerated. The underscore keeps keys apart from slugs, which never have one.
 */
export const newPublishKey = (): string => `pk_${randomBytes(24).toString('base64url')}`;

/** A slug: a readable public address chosen by the publisher, unique per deployment. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
