import { useEffect, useState } from 'preact/hooks';
import type { CatAnswer } from '../api/types.ts';
import { formatSize } from '../tree/formatSize.ts';
import { downloadAddress } from './downloadAddress.ts';
import { previewKind, TEXT_PREVIEW_BYTES } from './previewKind.ts';

type Loaded = { url: string } | { text: string; truncated: boolean } | { error: string } | null;

/**
 * A file shown where the browser can: images, audio and video straight from a download address;
 * a PDF in the browser's viewer from the same address with `disposition=inline` (answered
 * `Content-Disposition: inline` with the file's name, which the viewer shows as its title, where
 * a blob showed its random id; streamed, never read whole into the page); text files as text, the
 * first 256 KB of a larger one. Other files show nothing here (their size, type and Download stay above).
 */
export function FilePreview({ node }: { node: CatAnswer }) {
  const kind = previewKind(node.mime_type);
  const size = node.size ?? 0;
  const [loaded, setLoaded] = useState<Loaded>(null);

  useEffect(() => {
    setLoaded(null);
    if (!kind) return;
    let cancelled = false;
    const show = (value: Loaded) => {
      if (!cancelled) setLoaded(value);
    };
    (async () => {
      const address = await downloadAddress(node.id, node.version);
      if (kind === 'image' || kind === 'audio' || kind === 'video') return show({ url: address });
      if (kind === 'pdf') return show({ url: `${address}${address.includes('?') ? '&' : '?'}disposition=inline` });
      const partial = kind === 'text' && size > TEXT_PREVIEW_BYTES;
      const res = await fetch(address, partial ? { headers: { range: `bytes=0-${TEXT_PREVIEW_BYTES - 1}` } } : undefined);
      if (!res.ok) throw new Error(`the file could not be read (HTTP ${res.status})`);
      const bytes = await res.arrayBuffer();
      show({ text: new TextDecoder().decode(bytes), truncated: partial });
    })().catch((err: Error) => show({ error: `No preview: ${err.message}` }));
    return () => {
      cancelled = true;
    };
  }, [node.id, node.version, kind]);

  if (!kind) return null;
  const label = `Preview of ${node.name}`;
  if (!loaded) return <p aria-busy="true">Loading the preview…</p>;
  if ('error' in loaded) return <p role="alert" class="error">{loaded.error}</p>;
  if ('text' in loaded) {
    return (
      <figure class="file-preview">
        <pre class="text-preview" tabIndex={0} aria-label={label}>{loaded.text}</pre>
        {loaded.truncated && <figcaption class="muted">The first {formatSize(TEXT_PREVIEW_BYTES)} of {formatSize(size)}.</figcaption>}
      </figure>
    );
  }
  return (
    <figure class="file-preview">
      {kind === 'image' && (
        <img src={loaded.url} alt={label} onError={() => setLoaded({ error: 'No preview: the browser cannot show this image.' })} />
      )}
      {kind === 'pdf' && <iframe class="pdf-preview" src={loaded.url} title={label} />}
      {kind === 'audio' && <audio src={loaded.url} controls aria-label={label} />}
      {kind === 'video' && <video src={loaded.url} controls aria-label={label} />}
    </figure>
  );
}
