import { readFile } from 'node:fs/promises';
import { ConversionError, type ConvertInput, type ConvertOutput, type Progress } from './converter.ts';
import { imageSize } from './imageSize.ts';
import { tidy } from './markdown.ts';
import { recognize } from './ocr.ts';
import { outputName } from './names.ts';

/** Pixels an image may have for OCR (e.g. 8,000 × 5,000); Tesseract needs several bytes per pixel. */
export const MAX_OCR_PIXELS = 40_000_000;
/** Below this mean confidence the text is likely noise: said in a warning. */
const LOW_CONFIDENCE = 50;

/** PNG/JPEG/WebP → Markdown of the text OCR reads in it (English model), one page of progress. */
export async function convertImage(input: ConvertInput, progress: (p: Progress) => void): Promise<ConvertOutput> {
  const bytes = await readFile(input.file);
  const size = imageSize(bytes);
  if (!size || size.width === 0 || size.height === 0) throw new ConversionError('corrupt', 'the file is not a readable PNG, JPEG or WebP image');
  if (size.width * size.height > MAX_OCR_PIXELS) {
    throw new ConversionError('too_large', `the image has ${size.width} × ${size.height} pixels, more than the ${MAX_OCR_PIXELS} OCR reads`);
  }
  progress({ done: 0, total: 1, unit: 'pages' });
  let result: { text: string; confidence: number };
  try {
    result = await recognize(bytes);
  } catch (err) {
    if (err instanceof ConversionError) throw err;
    throw new ConversionError('corrupt', `the image cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  progress({ done: 1, total: 1, unit: 'pages' });
  const text = result.text.trim();
  const warnings: string[] = [];
  if (!text) warnings.push('OCR found no text in the image');
  else if (result.confidence < LOW_CONFIDENCE) warnings.push(`OCR confidence is low (${Math.round(result.confidence)}/100); the text may be wrong`);
  return { nodes: [{ name: outputName(input.name, 'md'), type: 'markdown', content: text ? tidy(text) : '' }], warnings };
}
