// Entry of a conversion child process, plain JavaScript: the child starts without the service's
// TypeScript loader (worker threads and children given their own execArgv do not inherit it),
// so the body is loaded through tsx's scoped import.
import { tsImport } from 'tsx/esm/api';

await tsImport('./conversionChild.ts', import.meta.url);
