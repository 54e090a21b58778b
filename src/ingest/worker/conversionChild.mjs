// Entry of a conversion child process, plain JavaScript: the child starts without the service's
// TypeScript loader (worker threads and children given their own execArgv do not inherit it).
import { importBody } from '../../util/importBody.mjs';

await importBody('./conversionChild', import.meta.url);
