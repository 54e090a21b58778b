import { createRequire } from 'node:module';
import type jmespathModule from 'jmespath';
import { z } from 'zod';
import { invalidField } from '../../errors/domainError.ts';
import { resolvePointer } from '../../util/jsonPointer.ts';
import { defineToolType } from '../toolType.ts';

let loaded: typeof jmespathModule | undefined;
/** jmespath, required by the first expression checked or run: the registry imports every tool type at start-up. */
const jmespath = () => (loaded ??= createRequire(import.meta.url)('jmespath') as typeof jmespathModule);

const pointer = z.string().max(4096).regex(/^(\/.*)?$/, 'a JSON Pointer (RFC 6901) is empty or starts with /');
const expression = z
  .string()
  .max(2000)
  .refine((e) => {
    const { search } = jmespath();
    try {
      search({}, e);
      return true;
    } catch (err) {
      return !(err instanceof Error && /Syntax|Lexer|Parser|Unknown token|Expected/i.test(err.name + err.message));
    }
  }, 'not a valid JMESPath expression');

export const queryJsonTool = defineToolType({
  type: 'query_json',
  summary: 'Reads a JSON node at a JSON Pointer (RFC 6901), optionally shaped by a JMESPath expression.',
  binds: 'any',
  config: z.object({ pointer: pointer.optional(), expression: expression.optional() }).strict(),
  input: z
    .object({
      path: z.string().max(4096).optional().describe("JSON node path relative to the tool's node; empty = the node itself"),
      pointer: pointer.optional().describe('JSON Pointer inside the document (default: the configured one, or the whole document)'),
      expression: expression.optional().describe('JMESPath applied to the value at the pointer (default: the configured one)'),
    })
    .strict(),
  async run(call) {
    const g = await call.grant('content:read');
    const path = call.resolve(g, call.args.path);
    const { node, value } = await call.env.content.readValue(g.projectId, { path });
    if (node.type !== 'json') throw invalidField('arguments.path', `${node.path} is not a JSON node`);
    const ptr = call.args.pointer ?? call.config.pointer ?? '';
    let result = resolvePointer(value, ptr, 'arguments.pointer');
    const expr = call.args.expression ?? call.config.expression;
    if (expr) result = jmespath().search(result as never, expr) as unknown;
    return { id: node.id, path: node.path, version: node.version, pointer: ptr, expression: expr ?? null, result };
  },
});
