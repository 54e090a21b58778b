/**
 * A file whose format could not be read (ingestion's conversions, the archives an import reads),
 * reported as is: corrupt, password-protected, too large.
 * `crashed`: the process converting it died (out of memory, a fatal error); the file is the
 * likely cause, the service is not affected. The limits of a conversion: `timeout` (its
 * wall-clock time), `too_many_pages` (a PDF's pages), `too_large` (decompressed bytes, or a
 * result larger than a node may be).
 */
export class ConversionError extends Error {
  constructor(
    readonly code: 'corrupt' | 'encrypted' | 'too_large' | 'too_many_pages' | 'timeout' | 'unsupported' | 'ocr_unavailable' | 'fetch_failed' | 'crashed',
    message: string,
  ) {
    super(message);
    this.name = 'ConversionError';
  }
}
