// A search query thread (see queryPool.ts). Worker threads do not inherit the main thread's
// TypeScript loader: it is registered here before the worker's code is loaded.
import { register } from 'tsx/esm/api';

register();
await import('./queryWorker.ts');
