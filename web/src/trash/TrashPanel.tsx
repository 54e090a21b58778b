import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import type { TrashItem } from '../api/types.ts';
import { ConfirmButton } from '../history/ConfirmButton.tsx';
import { NodeIcon } from '../tree/NodeIcon.tsx';

/** The project's trash: what was deleted, when, and a way back to where it was. */
export function TrashPanel({ projectId, revision }: { projectId: string; revision: number }) {
  const [items, setItems] = useState<TrashItem[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  const load = () =>
    api<{ items: TrashItem[] }>('GET', `/content/${projectId}/trash`)
      .then((r) => setItems(r.items))
      .catch((err: Error) => setMessage(err.message));
  useEffect(() => void load(), [projectId, revision]);

  const restore = async (item: TrashItem) => {
    try {
      const r = await api<{ path: string }>('POST', `/content/${projectId}/restore`, {
        trash_path: item.trash_path,
        original_path: item.original_path ?? item.name,
      });
      setMessage(`Restored to ${r.path}.`);
      await load();
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : String(err));
    }
  };

  /** Removing a trash path is permanent (POST /rm on the trash path with permanent: true): it and its history are gone. */
  const purge = async (item: TrashItem) => {
    try {
      await api('POST', `/content/${projectId}/rm`, { path: item.trash_path, permanent: true });
      setMessage(`Deleted ${item.original_path ?? item.name} permanently.`);
      await load();
    } catch (err) {
      setMessage(`Not deleted: ${err instanceof ApiError ? err.message : String(err)}`);
    }
  };

  return (
    <section class="trash" aria-label="Trash">
      <h2>Trash</h2>
      {message && <p role="status">{message}</p>}
      {items === null ? (
        <p aria-busy="true">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">The trash is empty.</p>
      ) : (
        <ul>
          {items.map((item) => (
            <li key={item.id}>
              <NodeIcon type={item.type} /> {item.original_path ?? item.name}{' '}
              {item.deleted_at && <time class="muted" dateTime={item.deleted_at}>{new Date(item.deleted_at).toLocaleString()}</time>}{' '}
              <button type="button" onClick={() => void restore(item)} aria-label={`Restore ${item.original_path ?? item.name}`}>Restore</button>{' '}
              <ConfirmButton
                buttonClass="danger"
                label={`Delete ${item.original_path ?? item.name} permanently`}
                text="Delete permanently"
                question={`Delete ${item.original_path ?? item.name} and its history for good? This cannot be undone.`}
                confirm="Confirm permanent deletion"
                onConfirm={() => purge(item)}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
