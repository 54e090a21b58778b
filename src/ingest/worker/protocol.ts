import { ConversionError, type ConvertInput, type ConvertOutput, type Progress } from '../converters/converter.ts';

/** Parent → conversion child: one job at a time. */
export type ToChild = { type: 'convert'; input: ConvertInput };

/** Conversion child → parent. */
export type FromChild =
  | { type: 'ready' }
  | { type: 'progress'; progress: Progress }
  | { type: 'done'; output: ConvertOutput; rss: number }
  /** `fatal`: the child exits after this message (an error outside the conversion). */
  | { type: 'failed'; error: SentError; fatal?: boolean };

export interface SentError {
  name: string;
  message: string;
  code?: ConversionError['code'];
}

export function sendableError(err: unknown): SentError {
  if (err instanceof ConversionError) return { name: err.name, message: err.message, code: err.code };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: 'Error', message: String(err) };
}

/** The error as the caller would have seen it in-process: a ConversionError keeps its class and code. */
export function receivedError(sent: SentError): Error {
  if (sent.code) return new ConversionError(sent.code, sent.message);
  const err = new Error(sent.message);
  err.name = sent.name;
  return err;
}
