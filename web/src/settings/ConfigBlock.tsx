import { useRef } from 'preact/hooks';
import { CopyButton } from './CopyButton.tsx';

/** A block of ready-to-paste text (a client configuration, a command) with a Copy button. */
export function ConfigBlock({ label, text }: { label: string; text: string }) {
  const pre = useRef<HTMLPreElement>(null);
  return (
    <div class="config-block">
      {/* Focusable, so a keyboard user can scroll a long block. */}
      <pre ref={pre} tabIndex={0} aria-label={label}>
        {text}
      </pre>
      <CopyButton text={text} target={pre} label={`Copy: ${label}`} />
    </div>
  );
}
