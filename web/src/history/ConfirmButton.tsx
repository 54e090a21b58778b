import { useEffect, useRef, useState } from 'preact/hooks';

interface Props {
  /** The button's accessible name (e.g. "Roll back the project to version 3"); the group is "Confirm: <label>". */
  label: string;
  text: string;
  /** The question asked before acting, and the confirming button's text. */
  question: string;
  confirm: string;
  /** Reports its own errors; the question closes when it settles. */
  onConfirm: () => Promise<void>;
  /** The first button's class: a link by default, `danger` for destructive actions. */
  buttonClass?: string;
}

/** An action that asks first: the button turns into a question with Confirm and Cancel (focus on Confirm). */
export function ConfirmButton({ label, text, question, confirm, onConfirm, buttonClass = 'link' }: Props) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmButton.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class={buttonClass} aria-label={label} onClick={() => setAsking(true)}>
        {text}
      </button>
    );
  }
  const go = async () => {
    setBusy(true);
    try {
      await onConfirm();
    } catch {
      // onConfirm shows its own errors
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <span class="confirm" role="group" aria-label={`Confirm: ${label}`}>
      {' '}
      {question}{' '}
      <button type="button" class="danger" disabled={busy} ref={confirmButton} onClick={() => void go()}>
        {confirm}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  );
}
