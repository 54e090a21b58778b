import { dropIdlePoolDatabases } from '../test/helpers/serverDatabasePool.ts';

// After the suite's PostgreSQL pass: drops the databases its servers shared (test/helpers/serverDatabasePool.ts).
const dropped = await dropIdlePoolDatabases();
console.log(`dropped ${dropped} test database${dropped === 1 ? '' : 's'} of the pool`);
