import { useEffect, useMemo, useReducer, useState } from 'preact/hooks';
import type { NodeType } from '../api/types.ts';
import { NodeIcon } from '../tree/NodeIcon.tsx';
import { matchCommands, type Command, type CommandId } from './commands.ts';
import { ModalDialog } from './Dialog.tsx';
import type { PathIndex } from './pathIndex.ts';

/** Results shown at most: the best ones; typing more narrows them. */
const SHOWN = 50;

interface Props {
  index: PathIndex;
  onOpen: (path: string) => void;
  onCommand: (id: CommandId) => void;
  onClose: () => void;
}

type Item = { kind: 'file'; path: string; type: NodeType; positions: number[] } | { kind: 'command'; command: Command };

/**
 * The palette (Ctrl/Cmd+K): files found by name, fuzzily, over the whole project, and commands.
 * A combobox and its listbox: arrows move, Enter opens, Escape closes; focus goes back where it was.
 */
export function QuickOpen({ index, onOpen, onCommand, onClose }: Props) {
  const [text, setText] = useState('');
  const [active, setActive] = useState(0);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    index.ensureLoaded();
    return index.subscribe(() => rerender(undefined));
  }, [index]);

  const size = index.size;
  const items = useMemo<Item[]>(() => {
    const files = index.search(text, SHOWN).map((f) => ({ kind: 'file' as const, ...f }));
    const commands = matchCommands(text).map((command) => ({ kind: 'command' as const, command }));
    // Nothing typed: the commands; something typed: files first, then the commands it names.
    return [...files, ...commands];
  }, [text, index.revision, index.state]);
  useEffect(() => setActive(0), [text]);
  const current = Math.min(active, items.length - 1);

  const choose = (item: Item | undefined) => {
    if (!item) return;
    onClose();
    if (item.kind === 'file') onOpen(item.path);
    else onCommand(item.command.id);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown') setActive((current + 1) % Math.max(1, items.length));
    else if (e.key === 'ArrowUp') setActive((current - 1 + items.length) % Math.max(1, items.length));
    else if (e.key === 'Home' && e.ctrlKey) setActive(0);
    else if (e.key === 'End' && e.ctrlKey) setActive(items.length - 1);
    else if (e.key === 'Enter') choose(items[current]);
    else return;
    e.preventDefault();
  };
  useEffect(() => {
    document.getElementById(`qo-${current}`)?.scrollIntoView({ block: 'nearest' });
  }, [current]);

  return (
    <ModalDialog label="Quick open" class="palette" onClose={onClose}>
      <input
        type="text"
        role="combobox"
        aria-label="Find a file or a command"
        aria-expanded="true"
        aria-controls="qo-list"
        aria-autocomplete="list"
        aria-activedescendant={items.length ? `qo-${current}` : undefined}
        placeholder="Find a file by name, or a command…"
        autoFocus
        autocomplete="off"
        spellcheck={false}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <p class="muted palette-status" role="status">
        {index.state === 'loading'
          ? `Reading the project’s files… ${size.toLocaleString('en')} so far`
          : index.state === 'error'
            ? `The file list could not be read: ${index.error}`
            : text && !items.some((i) => i.kind === 'file')
              ? `No file matches among ${size.toLocaleString('en')}`
              : `${size.toLocaleString('en')} files`}
      </p>
      {/* data-query: the text these results answer (what a benchmark waits for). */}
      <ul id="qo-list" role="listbox" aria-label="Results" data-query={text}>
        {items.map((item, i) => (
          <li
            id={`qo-${i}`}
            key={item.kind === 'file' ? `f:${item.path}` : `c:${item.command.id}`}
            role="option"
            aria-selected={i === current}
            class={i === current ? 'active' : undefined}
            onClick={() => choose(item)}
            onMouseMove={() => i !== current && setActive(i)}
          >
            {item.kind === 'file' ? <FileResult path={item.path} type={item.type} positions={item.positions} /> : <span class="command">{item.command.label}</span>}
          </li>
        ))}
      </ul>
    </ModalDialog>
  );
}

/** A found file: its name, then its folder, the matched characters marked. */
function FileResult({ path, type, positions }: { path: string; type: NodeType; positions: number[] }) {
  const cut = path.lastIndexOf('/') + 1;
  const marked = new Set(positions);
  const part = (from: number, to: number) => {
    const out = [];
    for (let i = from; i < to; i++) out.push(marked.has(i) ? <mark key={i}>{path[i]}</mark> : path[i]);
    return out;
  };
  return (
    <>
      <NodeIcon type={type} open={false} />
      <span class="name">{part(cut, path.length)}</span>
      {cut > 0 && <span class="folder muted">{part(0, cut - 1)}</span>}
    </>
  );
}
