import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './messageOf.ts';

export interface Loaded<T> {
  /** null until the first answer (or after a failed first load). */
  data: T | null;
  /** The envelope's message of the last failed load. */
  error: string | null;
  /** Loads again (after a change); the answer of an older call never overwrites a newer one. */
  reload: () => Promise<void>;
}

/** Something the panel reads from the API, loaded again whenever `deps` change. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(0);
  const live = useRef(true);
  useEffect(() => () => void (live.current = false), []);

  const reload = async () => {
    const call = ++latest.current;
    try {
      const answer = await load();
      if (!live.current || call !== latest.current) return;
      setData(answer);
      setError(null);
    } catch (err) {
      if (live.current && call === latest.current) setError(messageOf(err));
    }
  };
  useEffect(() => void reload(), deps);
  return { data, error, reload };
}
