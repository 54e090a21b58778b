import { invalidField } from '../../errors/domainError.ts';
import type { ConnectorField, ConnectorSpec } from '../../sync/connectorSpec.ts';

/**
 * A platform sync's config checked against its connector's declared fields: required ones
 * present, each of its type, and no field the connector does not know (it would be silently
 * ignored otherwise). The connector's own `validateConfig` checks the values further.
 */
export function checkConfigFields(spec: ConnectorSpec, config: Record<string, unknown>): void {
  const known = new Map(spec.config_fields.map((f) => [f.name, f]));
  for (const name of Object.keys(config)) {
    if (!known.has(name)) throw invalidField(`config.${name}`, `is not a ${spec.provider} setting; known: ${[...known.keys()].join(', ')}`);
  }
  for (const f of spec.config_fields) {
    const v = config[f.name];
    if (v === undefined || v === null || v === '') {
      if (f.required) throw invalidField(`config.${f.name}`, 'is required');
      continue;
    }
    const problem = typeProblem(f, v);
    if (problem) throw invalidField(`config.${f.name}`, problem);
  }
}

function typeProblem(f: ConnectorField, v: unknown): string | null {
  switch (f.type) {
    case 'integer':
      return Number.isInteger(typeof v === 'string' ? Number(v) : v) ? null : 'must be a whole number';
    case 'boolean':
      return typeof v === 'boolean' || v === 'true' || v === 'false' ? null : 'must be true or false';
    case 'string_list':
      return typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')) ? null : 'must be a list of strings (or one comma-separated string)';
    default:
      return typeof v === 'string' ? null : 'must be a string';
  }
}
