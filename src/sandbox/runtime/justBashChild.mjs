// Entry of a just-bash child process, plain JavaScript: the child starts without the service's
// TypeScript loader, so the body is loaded through tsx's scoped import.
import { tsImport } from 'tsx/esm/api';

await tsImport('./justBashChild.ts', import.meta.url);
