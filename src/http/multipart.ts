import type { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type formidable from 'formidable';
import type { Middleware } from 'koa';
import { AppError, validationError } from './errors.ts';
import type { UploadedFile } from '../ingest/ingest.ts';

export interface MultipartLimits {
  /** A fresh folder for this request's files (removed when the request ends). */
  dir(): Promise<string>;
  maxFileBytes: number;
  maxFiles: number;
}

/** Text fields a submission carries: a handful of short values. */
const MAX_FIELDS = 50;
const MAX_FIELDS_BYTES = 64 * 1024;

// formidable's error codes (its FormidableError.js).
const TOO_MANY_FILES = 1015;
const FIELDS_TOO_LARGE = new Set([1006, 1007]);
const FILE_TOO_LARGE = new Set([1009, 1016]);

/** A file that grew past the limit while streaming (formidable itself only checks one when it ends). */
class FileTooLarge extends Error {}

/** formidable (~70 ms of CPU to load) is imported by the first multipart upload: most processes never take one. */
let formidableModule: Promise<typeof formidable> | undefined;
const loadFormidable = () => (formidableModule ??= import('formidable').then((m) => m.default));

const tooLarge = (message: string, details: Record<string, unknown>) => new AppError('PAYLOAD_TOO_LARGE', message, details);

/**
 * Reads a multipart/form-data body with formidable, each file streamed to disk in a folder of
 * its own (never buffered whole), into `ctx.request.body`: the text fields (a field sent twice
 * is a list, which the route's schema refuses) and `files`, every file part in the order sent. Past the
 * limits it is 413 (formidable answers 500 by default): a file larger than `maxFileBytes`
 * (stopped as soon as it gets there), more than `maxFiles` files, oversized text fields. A
 * body that is not multipart, or not readable as such, is 422. The folder and whatever the
 * handler did not move out of it are removed when the request ends, whatever the outcome.
 */
export function multipartUploads(limits: () => MultipartLimits): Middleware {
  return async (ctx, next) => {
    const l = limits();
    if (!ctx.is('multipart/form-data')) {
      throw validationError('Send the files as multipart/form-data.', [{ field: 'body', message: 'expected a multipart/form-data body' }]);
    }
    const declared = Number(ctx.get('content-length') || NaN);
    if (declared > l.maxFiles * l.maxFileBytes + MAX_FIELDS_BYTES + 1024 * 1024) {
      throw tooLarge(`The request is larger than ${l.maxFiles} files of ${l.maxFileBytes} bytes.`, { limit: l.maxFileBytes, max_files: l.maxFiles });
    }
    const dir = await l.dir();
    try {
      ctx.request.body = await readForm(ctx.req, dir, l);
      await next();
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 2 });
    }
  };
}

async function readForm(req: IncomingMessage, dir: string, l: MultipartLimits): Promise<Record<string, unknown>> {
  const newForm = await loadFormidable();
  const form = newForm({
    uploadDir: dir,
    maxFiles: l.maxFiles,
    maxFileSize: l.maxFileBytes,
    maxTotalFileSize: l.maxFiles * l.maxFileBytes,
    allowEmptyFiles: true,
    minFileSize: 0,
    maxFields: MAX_FIELDS,
    maxFieldsSize: MAX_FIELDS_BYTES,
  });
  // In the order the parts came: formidable's own lists follow the order the files finished writing.
  const inOrder: formidable.File[] = [];
  form.on('fileBegin', (_field, file) => {
    inOrder.push(file);
    const f = file as unknown as EventEmitter;
    f.on('progress', (size: number) => {
      if (size > l.maxFileBytes) f.emit('error', new FileTooLarge(`${file.originalFilename ?? 'a file'} is larger than ${l.maxFileBytes} bytes`));
    });
  });
  let fields: formidable.Fields;
  try {
    [fields] = await form.parse(req);
  } catch (e) {
    throw multipartError(e, l);
  }
  const body: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(fields)) if (values) body[name] = values.length === 1 ? values[0] : values;
  const uploaded: UploadedFile[] = inOrder.map((f) => ({ name: f.originalFilename || 'upload', path: f.filepath, size: f.size, mimeType: f.mimetype || null }));
  body.files = uploaded;
  return body;
}

function multipartError(e: unknown, l: MultipartLimits): AppError {
  const code = (e as { code?: unknown }).code;
  if (e instanceof FileTooLarge || (typeof code === 'number' && FILE_TOO_LARGE.has(code))) {
    return tooLarge(`A file is larger than ${l.maxFileBytes} bytes, the most one file may have (CNS_INGEST_MAX_FILE_BYTES).`, { limit: l.maxFileBytes });
  }
  if (code === TOO_MANY_FILES) return tooLarge(`More than ${l.maxFiles} files: one submission takes at most ${l.maxFiles} (CNS_INGEST_MAX_FILES).`, { max_files: l.maxFiles });
  if (typeof code === 'number' && FIELDS_TOO_LARGE.has(code)) return tooLarge('The text fields are too many or too large.', { max_fields: MAX_FIELDS, max_fields_bytes: MAX_FIELDS_BYTES });
  const message = e instanceof Error ? e.message : String(e);
  return validationError(`The body could not be read as multipart/form-data: ${message}.`, [{ field: 'body', message }]);
}
