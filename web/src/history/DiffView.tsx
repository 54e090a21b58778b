import { useState } from 'preact/hooks';
import type { NodeDiff } from '../api/types.ts';
import { sideBySideRows } from './sideBySide.ts';

type Mode = 'unified' | 'side' | 'patch';

/**
 * Two versions compared: a unified diff or the two side by side (a toggle), and for JSON
 * documents the JSON Patch (RFC 6902) the API computes, as a table of operations. Added and
 * removed lines are marked by +/- and column, not by colour alone.
 */
export function DiffView({ diff, v1, v2 }: { diff: NodeDiff; v1: number; v2: number }) {
  const [mode, setMode] = useState<Mode>('unified');
  if (diff.kind === 'binary') return <p>{diff.identical ? 'The two versions are identical.' : 'Binary file: the two versions differ.'}</p>;
  const modes: [Mode, string][] = [['unified', 'Unified'], ['side', 'Side by side']];
  if (diff.kind === 'json' && diff.json_patch) modes.push(['patch', 'JSON Patch']);
  return (
    <figure class="diff" aria-label={`Changes from version ${v1} to version ${v2}`}>
      <div class="toggle" role="group" aria-label="Diff view">
        {modes.map(([m, label]) => (
          <button key={m} type="button" aria-pressed={mode === m} onClick={() => setMode(m)}>
            {label}
          </button>
        ))}
      </div>
      {mode === 'unified' ? (
        <Unified text={diff.unified_diff ?? ''} />
      ) : mode === 'side' ? (
        <SideBySide text={diff.unified_diff ?? ''} v1={v1} v2={v2} />
      ) : (
        <JsonPatch ops={diff.json_patch ?? []} />
      )}
    </figure>
  );
}

function Unified({ text }: { text: string }) {
  const lines = text.split('\n').filter((l) => !l.startsWith('====='));
  return (
    <pre tabIndex={0} aria-label="Unified diff">
      {lines.map((line, i) => (
        <div key={i} class={lineClass(line)}>
          {line || ' '}
        </div>
      ))}
    </pre>
  );
}

function SideBySide({ text, v1, v2 }: { text: string; v1: number; v2: number }) {
  const rows = sideBySideRows(text);
  if (rows.length === 0) return <p>The two versions are identical.</p>;
  return (
    <div class="side-by-side" tabIndex={0} role="region" aria-label="Side by side diff">
      <table>
        <colgroup>
          <col class="num" />
          <col />
          <col class="num" />
          <col />
        </colgroup>
        <thead>
          <tr>
            <th scope="col" colSpan={2}>Version {v1}</th>
            <th scope="col" colSpan={2}>Version {v2}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) =>
            'hunk' in row ? (
              <tr key={i} class="hunk">
                <td colSpan={4}>{row.hunk}</td>
              </tr>
            ) : (
              <tr key={i}>
                <td class="num">{row.left?.n ?? ''}</td>
                <td class={row.left ? (row.left.changed ? 'del' : '') : 'empty'} data-side="old">
                  {row.left ? `${row.left.changed ? '-' : ' '}${row.left.text}` : ''}
                </td>
                <td class="num">{row.right?.n ?? ''}</td>
                <td class={row.right ? (row.right.changed ? 'add' : '') : 'empty'} data-side="new">
                  {row.right ? `${row.right.changed ? '+' : ' '}${row.right.text}` : ''}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}

function JsonPatch({ ops }: { ops: NonNullable<NodeDiff['json_patch']> }) {
  if (ops.length === 0) return <p>No change to the JSON value.</p>;
  return (
    <div class="patch" tabIndex={0} role="region" aria-label="JSON Patch">
      <table>
        <thead>
          <tr>
            <th scope="col">Operation</th>
            <th scope="col">Path</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {ops.map((op, i) => (
            <tr key={i} class={`op-${op.op}`}>
              <td><code>{op.op}</code></td>
              <td><code>{op.path || '(the whole document)'}</code></td>
              <td>
                {op.from !== undefined && <>from <code>{op.from}</code></>}
                {op.value !== undefined && <code>{JSON.stringify(op.value)}</code>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function lineClass(line: string): string {
  if (line.startsWith('--- ') || line.startsWith('+++ ') || line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return '';
}
