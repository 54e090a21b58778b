import { createRequire } from 'node:module';
import type { Ajv, Options } from 'ajv';

type AjvClass = new (options: Options) => Ajv;

/** Each draft's class, required on first use: ajv costs ~60 ms of CPU to load, and most processes never compile a schema. */
const classes = new Map<string, AjvClass>();

function ajvClass(module: string, name: string): AjvClass {
  let cls = classes.get(module);
  if (!cls) classes.set(module, (cls = (createRequire(import.meta.url)(module) as Record<string, AjvClass>)[name]!));
  return cls;
}

/** A new Ajv for the draft a schema's `$schema` names: draft-07 (also when absent), 2019-09 or 2020-12. */
export function ajvFor(schema: Record<string, unknown>, options: Options): Ajv {
  const draft = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (draft.includes('2020-12')) return new (ajvClass('ajv/dist/2020.js', 'Ajv2020'))(options);
  if (draft.includes('2019-09')) return new (ajvClass('ajv/dist/2019.js', 'Ajv2019'))(options);
  return new (ajvClass('ajv', 'Ajv'))(options);
}
