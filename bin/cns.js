#!/usr/bin/env node
// The `cns` executable: the TypeScript sources run directly through tsx, so there is no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
