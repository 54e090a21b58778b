/** What the browser can show of a file, by its media type (the service sets it from the name). */
export type PreviewKind = 'image' | 'pdf' | 'text' | 'audio' | 'video';

const TEXT = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|toml|sql|x-sh)\b)/;

export function previewKind(mimeType: string | null | undefined): PreviewKind | null {
  const type = (mimeType ?? '').toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type === 'application/pdf') return 'pdf';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('video/')) return 'video';
  if (TEXT.test(type)) return 'text';
  return null;
}

/** Text shown in full up to this size; beyond it, the first part only (a Range request). */
export const TEXT_PREVIEW_BYTES = 256 * 1024;
