import { readFile } from 'node:fs/promises';
import type { ConvertInput, ConvertOutput, Progress } from './converter.ts';
import { decodeText } from './decode.ts';
import { outputName } from './names.ts';

/**
 * TXT/MD → a Markdown node holding the text as it is (Markdown is plain text; a `.txt` reads the
 * same), line endings made `\n`. Bytes that are not UTF-8 are read as windows-1252, with a warning.
 */
export async function convertText(input: ConvertInput, progress: (p: Progress) => void): Promise<ConvertOutput> {
  const bytes = await readFile(input.file);
  const { text, fallback } = decodeText(bytes);
  progress({ done: bytes.length, total: bytes.length, unit: 'bytes' });
  return {
    nodes: [{ name: outputName(input.name, 'md'), type: 'markdown', content: text.replace(/\r\n?/g, '\n') }],
    warnings: fallback ? ['the file is not UTF-8; it was read as windows-1252'] : [],
  };
}
