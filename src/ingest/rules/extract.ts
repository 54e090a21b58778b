import type { ValidateFunction } from 'ajv';
import type { ChatMessage, ChatProvider, ToolCallRequest } from '../../llm/provider.ts';
import { TaskFailure } from '../queue/taskFailure.ts';
import { describeViolations, violations, type SchemaViolation } from './schemaCheck.ts';

/** The one tool the model is offered; its arguments are the extracted value. */
export const EMIT_TOOL = 'emit_result';
/** Text given to the model, characters; past it the text is cut (and the task warns). */
const MAX_TEXT_CHARS = 200_000;
const MAX_OUTPUT_TOKENS = 8192;

export interface Extraction {
  provider: ChatProvider;
  model: string;
  schema: Record<string, unknown>;
  validate: ValidateFunction;
  instructions: string | null;
  /** The converted document (Markdown, or JSON text). */
  text: string;
  source: string;
  signal: AbortSignal;
}

/**
 * Structured JSON from a document through the language model: the model is offered ONE tool,
 * `emit_result`, whose input schema is the rule's JSON Schema, and asked to call it. Its
 * arguments are validated with ajv; an invalid answer (or no call) is sent back once with the
 * errors, and a second invalid answer fails the task with them ('extraction_invalid'). Tool
 * arguments are always an object, so a schema of another type is asked for as `{result: …}`.
 */
export async function extractJson(x: Extraction): Promise<{ value: unknown; warnings: string[] }> {
  const warnings: string[] = [];
  let text = x.text;
  if (text.length > MAX_TEXT_CHARS) {
    text = text.slice(0, MAX_TEXT_CHARS);
    warnings.push(`the model was given the first ${MAX_TEXT_CHARS} characters of the converted text`);
  }
  const wrapped = x.schema.type !== 'object';
  const tool = { name: EMIT_TOOL, description: 'Submit the data extracted from the document. Call it exactly once.', inputSchema: toolSchema(x.schema, wrapped) };
  const system = [
    'You extract structured data from a document.',
    `Read the document the user sends and call the tool ${EMIT_TOOL} exactly once, with arguments that follow its input schema.`,
    'Use only what the document says; do not write any other answer.',
    ...(x.instructions ? [`Instructions: ${x.instructions}`] : []),
  ].join('\n');
  const messages: ChatMessage[] = [{ role: 'user', content: `Document "${x.source}":\n\n${text}` }];
  let problems: SchemaViolation[] = [];
  for (let attempt = 1; attempt <= 2; attempt++) {
    const reply = await ask(x, system, messages, tool);
    const call = reply.calls.find((c) => c.name === EMIT_TOOL);
    if (!call) {
      problems = [{ pointer: '', message: `the model did not call ${EMIT_TOOL}` }];
      messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.calls }, ...reply.calls.map((c) => refusedCall(c)), {
        role: 'user',
        content: `You must call the tool ${EMIT_TOOL} with the extracted data.`,
      });
      continue;
    }
    const value = call.argumentsError ? undefined : wrapped ? call.arguments.result : call.arguments;
    problems = call.argumentsError ? [{ pointer: '', message: call.argumentsError }] : x.validate(value) ? [] : violations(x.validate.errors);
    if (problems.length === 0) return { value, warnings };
    messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.calls }, ...reply.calls.map((c) =>
      c === call
        ? { role: 'tool' as const, toolCallId: c.id, name: c.name, isError: true, content: `The arguments do not follow the schema: ${describeViolations(problems)}. Call ${EMIT_TOOL} again with corrected arguments.` }
        : refusedCall(c),
    ));
  }
  throw new TaskFailure('extraction_invalid', `the model's answer did not follow the rule's JSON Schema twice: ${describeViolations(problems)}`, { errors: problems });
}

async function ask(x: Extraction, system: string, messages: ChatMessage[], tool: { name: string; description: string; inputSchema: Record<string, unknown> }) {
  let text = '';
  const calls: ToolCallRequest[] = [];
  // No temperature: Anthropic's current models refuse one.
  for await (const ev of x.provider.stream({ model: x.model, system, messages, tools: [tool], maxTokens: MAX_OUTPUT_TOKENS, signal: x.signal })) {
    if (ev.type === 'text') text += ev.text;
    else if (ev.type === 'tool_call') calls.push(ev.call);
  }
  return { text, calls };
}

/** Every tool call needs an answer before the conversation goes on. */
const refusedCall = (c: ToolCallRequest): ChatMessage => ({ role: 'tool', toolCallId: c.id, name: c.name, isError: true, content: `There is no tool ${c.name}; call ${EMIT_TOOL}.` });

/** The tool's input schema: the rule's own (without `$schema`, which providers do not take), or `{result: schema}`. */
function toolSchema(schema: Record<string, unknown>, wrapped: boolean): Record<string, unknown> {
  const { $schema: _draft, ...rest } = schema;
  if (!wrapped) return rest;
  // Definitions stay at the root, where the schema's `#/$defs/…` references look for them.
  const { $defs, definitions, ...inner } = rest;
  return { type: 'object', properties: { result: inner }, required: ['result'], ...($defs ? { $defs } : {}), ...(definitions ? { definitions } : {}) };
}
