import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

interface Props {
  label: string;
  class: string;
  onClose: () => void;
  children: ComponentChildren;
}

/**
 * A modal dialog (the browser's own: focus kept inside, Escape closes it), open while rendered.
 * Focus goes back to where it was when it closes.
 */
export function ModalDialog({ label, class: cls, onClose, children }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  // At commit, not after paint: the dialog is never on screen without the focus inside it.
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const dialog = ref.current!;
    dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      if (before?.isConnected) before.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={cls}
      aria-label={label}
      onClose={onClose}
      onClick={(e) => {
        // A click on the backdrop (the dialog element itself, outside its content) closes it.
        if (e.target === ref.current) onClose();
      }}
    >
      {children}
    </dialog>
  );
}
