import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Where the bundled English OCR model is (`@tesseract.js-data/eng`, the integer "best" LSTM
 * model), or null when the package is missing. Tesseract must be pointed at it: without a
 * `langPath` it downloads the model from a CDN (and hangs offline).
 */
export function ocrLangPath(): string | null {
  try {
    const dir = join(dirname(createRequire(import.meta.url).resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
    return existsSync(join(dir, 'eng.traineddata.gz')) ? dir : null;
  } catch {
    return null;
  }
}
