import { useState } from 'preact/hooks';
import { messageOf } from './messageOf.ts';

export interface Action {
  /** The envelope's message of the last failed change (shown in a role="alert"). */
  error: string | null;
  /** What the last successful change did (shown in a role="status"). */
  note: string | null;
  /**
   * Runs a change and then `after` (a reload); the outcome is announced either way, a success after
   * the reload. Answers
   * what the API answered, or null when it refused.
   */
  run: <T>(change: () => Promise<T>, done: string | ((answer: T) => string), after?: () => Promise<void>) => Promise<T | null>;
}

/** The changes one part of the panel makes, with the last outcome to announce. */
export function useAction(): Action {
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const run: Action['run'] = async (change, done, after) => {
    setError(null);
    setNote(null);
    let answer;
    try {
      answer = await change();
    } catch (err) {
      setError(messageOf(err));
      return null;
    }
    // Announced once the panel shows the change, so the note never contradicts the list.
    await after?.();
    setNote(typeof done === 'string' ? done : done(answer));
    return answer;
  };
  return { error, note, run };
}
