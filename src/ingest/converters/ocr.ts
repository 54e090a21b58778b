import { createWorker, OEM, PSM, type Worker } from 'tesseract.js';
import { ConversionError } from './converter.ts';
import { ocrLangPath } from './ocrData.ts';

let worker: Promise<Worker> | null = null;

/**
 * One Tesseract worker per process, started at the first recognition (0.5-1 s: the model is
 * loaded) and reused, offline: the bundled model by `langPath`, nothing cached to disk, and
 * automatic page segmentation (the default, one uniform block, drops smaller lines on sparse
 * pages). `closeOcr` ends it.
 */
function ocrWorker(): Promise<Worker> {
  if (worker) return worker;
  const langPath = ocrLangPath();
  if (!langPath) throw new ConversionError('ocr_unavailable', 'OCR is not available: the English model (@tesseract.js-data/eng) is not installed');
  worker = (async () => {
    const w = await createWorker('eng', OEM.LSTM_ONLY, {
      langPath,
      gzip: true,
      cacheMethod: 'none',
    });
    await w.setParameters({ tessedit_pageseg_mode: PSM.AUTO });
    return w;
  })();
  // A worker that failed to start is not kept: the next recognition tries again.
  worker.catch(() => (worker = null));
  return worker;
}

/** The text Tesseract reads in an image, and its mean confidence (0-100). */
export async function recognize(image: Buffer): Promise<{ text: string; confidence: number }> {
  const { data } = await (await ocrWorker()).recognize(image);
  return { text: data.text, confidence: data.confidence };
}

/** Ends the worker, if one was started. */
export async function closeOcr(): Promise<void> {
  const current = worker;
  worker = null;
  if (current) await current.then((w) => w.terminate(), () => undefined);
}
