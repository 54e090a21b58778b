import type { ComponentChildren } from 'preact';
import { ErrorAlert } from './ErrorAlert.tsx';

/**
 * A settings section listing one kind of a project's connections (agents, syncs, MCP and
 * sandbox endpoints): loading, the load's failure, the empty state, or a card per item under
 * `intro`. The list is named by the section's title.
 */
export function ConnectionList<T extends { id: string }>(props: {
  id: string;
  title: string;
  error: string | null;
  items: T[] | undefined;
  empty: ComponentChildren;
  intro?: ComponentChildren;
  children: (item: T) => ComponentChildren;
}) {
  const { id, title, error, items } = props;
  return (
    <section aria-labelledby={id}>
      <h4 id={id}>{title}</h4>
      <ErrorAlert message={error} />
      {!items ? (
        !error && <p aria-busy="true">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <>
          {props.intro}
          <ul class="connection-list" aria-label={title}>
            {items.map((item) => (
              <li key={item.id}>{props.children(item)}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
