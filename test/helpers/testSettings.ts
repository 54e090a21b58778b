/**
 * Settings every server of the suite runs with, in process or spawned. scrypt at N = 2^10 for
 * the suite's users: 1.4 ms a hash against 25 ms at the default 2^14, and the suite hashes and
 * verifies thousands of passwords (test/auth/passwords.test.ts covers the default cost).
 */
export const SUITE_SETTINGS = { CNS_RATE_LIMIT_MAX: '0', CNS_LOGIN_RATE_LIMIT_MAX: '0', CNS_PASSWORD_HASH_COST: '10' } as const;
