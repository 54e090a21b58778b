import { useRef } from 'preact/hooks';

/**
 * "Upload…" opens the system's file chooser (several files at once). The file input itself
 * stays hidden: a styled button is what keyboard and pointer users reach.
 */
export function UploadButton({ folder, onFiles }: { folder: string; onFiles: (files: File[]) => void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <div class="upload">
      <button type="button" onClick={() => input.current?.click()} aria-label={`Upload files to /${folder}`}>
        Upload…
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        tabIndex={-1}
        aria-label={`Files to upload to /${folder}`}
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          // Cleared so that choosing the same file again fires change again.
          e.currentTarget.value = '';
          if (files.length) onFiles(files);
        }}
      />
    </div>
  );
}
