import { gitNameProblem, PLACEHOLDER } from '../../content/paths.ts';

const MAX_NAME_BYTES = 255;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

/**
 * A name the content store accepts, made from a name a user or a document chose (an uploaded
 * file's name, a sheet's name): control characters dropped, `/` and `\` (separators) turned
 * into `_`, names git refuses (`.git`, `.`, `..`) and the store's reserved placeholder prefixed
 * with `_`, cut to 255 bytes keeping the extension. Never empty.
 */
export function safeName(raw: string): string {
  let name = raw.normalize('NFC').replace(CONTROL, '').replace(/[/\\]/g, '_').trim();
  if (name === '') name = 'untitled';
  if (name === '.' || name === '..' || name === PLACEHOLDER || gitNameProblem(name)) name = `_${name}`;
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const ext = extensionOf(name);
  const suffix = ext && Buffer.byteLength(ext) < 32 ? `.${ext}` : '';
  let stem = name.slice(0, name.length - suffix.length);
  while (Buffer.byteLength(stem + suffix) > MAX_NAME_BYTES) stem = [...stem].slice(0, -1).join('');
  return stem + suffix;
}

/** The source's name without its extension (`report.final.pdf` → `report.final`), safe. */
export function baseOf(sourceName: string): string {
  const name = safeName(sourceName);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** The output node's name: the source's base with a new extension (`report.pdf` → `report.md`). */
export function outputName(sourceName: string, extension: 'md' | 'json'): string {
  return safeName(`${baseOf(sourceName)}.${extension}`);
}

/** Lower-case extension without the dot, or ''. */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}
