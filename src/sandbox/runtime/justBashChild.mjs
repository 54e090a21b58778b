// Entry of a just-bash child process, plain JavaScript: the child starts without the service's
// TypeScript loader.
import { importBody } from '../../util/importBody.mjs';

await importBody('./justBashChild', import.meta.url);
