import { useEffect, useRef } from 'preact/hooks';

/**
 * The workspace's keys: Ctrl/Cmd+K anywhere (even in a text field, as in other tools) and `?`
 * outside text fields, neither while another dialog is open.
 */
export function useShortcuts(handlers: { quickOpen: () => void; shortcuts: () => void }): void {
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || document.querySelector('dialog[open]')) return;
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        ref.current.quickOpen();
      } else if (e.key === '?' && !e.ctrlKey && !e.metaKey && !e.altKey && !inTextField(e.target)) {
        e.preventDefault();
        ref.current.shortcuts();
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
}

function inTextField(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  if (el.isContentEditable) return true;
  if (el.tagName === 'TEXTAREA' || el.tagName === 'SELECT') return true;
  if (el.tagName !== 'INPUT') return false;
  return !['button', 'checkbox', 'radio', 'submit', 'reset', 'file', 'range', 'color'].includes((el as HTMLInputElement).type);
}
