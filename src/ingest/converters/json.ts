import { readFile } from 'node:fs/promises';
import { ConversionError, type ConvertInput, type ConvertOutput, type Progress } from './converter.ts';
import { decodeText } from './decode.ts';
import { safeName } from './names.ts';

/**
 * JSON → a json node, whatever the mode. Invalid JSON is 'corrupt' (with the parser's message);
 * a document that is a single number, string, boolean or null cannot be a json node (the store
 * holds objects and arrays), so it is kept unchanged as a file node, with a warning.
 */
export async function convertJson(input: ConvertInput, progress: (p: Progress) => void): Promise<ConvertOutput> {
  const bytes = await readFile(input.file);
  let value: unknown;
  try {
    value = JSON.parse(decodeText(bytes).text);
  } catch (err) {
    throw new ConversionError('corrupt', `the file is not valid JSON: ${(err as Error).message}`);
  }
  progress({ done: bytes.length, total: bytes.length, unit: 'bytes' });
  const name = safeName(input.name);
  if (value === null || typeof value !== 'object') {
    return { nodes: [{ name, type: 'file', file: input.file }], warnings: ['the JSON is a single value, not an object or an array; it was stored unchanged as a file'] };
  }
  return { nodes: [{ name, type: 'json', content: value }], warnings: [] };
}
