/**
 * A JSON value as a collapsible tree: objects and arrays are `<details>` (their `<summary>` is
 * reachable with Tab and opens with Enter or Space), each with its key, its kind and how many
 * entries it holds; other values show their type beside them. The first two levels start open.
 */
export function JsonTree({ value }: { value: unknown }) {
  return (
    <section class="json-tree" aria-label="Structured view">
      <ul>
        <Entry name="(root)" value={value} depth={0} />
      </ul>
    </section>
  );
}

/** Children rendered per object or array; a larger one says how many more it holds. */
const MAX_CHILDREN = 500;

function Entry({ name, value, depth }: { name: string; value: unknown; depth: number }) {
  const key = <span class="key">{name}</span>;
  if (value !== null && typeof value === 'object') {
    const isArray = Array.isArray(value);
    const entries = isArray ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
    const summary = isArray ? `array, ${count(entries.length, 'item')}` : `object, ${count(entries.length, 'key')}`;
    return (
      <li>
        <details open={depth < 2}>
          <summary>
            {key} <span class="type">{summary}</span>
          </summary>
          {entries.length > 0 && (
            <ul>
              {entries.slice(0, MAX_CHILDREN).map(([k, v]) => <Entry key={k} name={isArray ? `[${k}]` : k} value={v} depth={depth + 1} />)}
              {entries.length > MAX_CHILDREN && <li class="muted">… {entries.length - MAX_CHILDREN} more (see the source)</li>}
            </ul>
          )}
        </details>
      </li>
    );
  }
  const type = value === null ? 'null' : typeof value;
  return (
    <li class="leaf">
      {key}: <span class={`value ${type}`}>{type === 'string' ? JSON.stringify(value) : String(value)}</span> <span class="type">{type}</span>
    </li>
  );
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
