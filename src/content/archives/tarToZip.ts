import type { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import ZipStream from 'zip-stream';

/**
 * Re-packs a tar stream (files and folders, as archiveTarStream gives it) into a zip stream,
 * one entry at a time: each file's bytes flow from the tar straight into the zip's deflater
 * (zlib, off the event loop), never held whole. Folders become directory entries (so empty
 * folders survive the round trip). Zip64 is used as sizes and counts need it.
 */
export function tarToZip(tar: Readable, level: number): Readable {
  const zip = new ZipStream({ zlib: { level } });
  const parser = extract();
  const fail = (e: unknown) => {
    tar.destroy();
    parser.destroy();
    zip.destroy(e as Error);
  };
  parser.on('entry', (header, stream, next) => {
    const name = header.name.replace(/\/+$/, '');
    const date = header.mtime ?? new Date(0);
    if (header.type === 'directory') {
      stream.resume();
      zip.entry(null, { name: `${name}/`, type: 'directory', date, mode: 0o755 }, (e) => (e ? fail(e) : next()));
    } else if (header.type === 'file') {
      zip.entry(stream, { name, type: 'file', date, mode: header.mode ?? 0o644 }, (e) => (e ? fail(e) : next()));
    } else {
      // The filter upstream lets only files and folders through; anything else is skipped.
      stream.on('end', () => next()).resume();
    }
  });
  parser.on('finish', () => zip.finish());
  parser.on('error', fail);
  tar.on('error', fail);
  zip.once('close', () => tar.destroy());
  tar.pipe(parser);
  return zip;
}
