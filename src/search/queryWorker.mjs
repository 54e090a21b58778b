// A search query thread (see queryPool.ts). Worker threads do not inherit the main thread's
// TypeScript loader.
import { importBody } from '../util/importBody.mjs';

await importBody('./queryWorker', import.meta.url);
