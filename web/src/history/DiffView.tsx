import type { NodeDiff } from '../api/types.ts';

/** A unified diff, one line per row, added and removed lines marked (not by colour alone: +/-). */
export function DiffView({ diff, v1, v2 }: { diff: NodeDiff; v1: number; v2: number }) {
  if (diff.kind === 'binary') return <p>{diff.identical ? 'The two versions are identical.' : 'Binary file: the two versions differ.'}</p>;
  const lines = (diff.unified_diff ?? '').split('\n').filter((l) => !l.startsWith('====='));
  return (
    <figure class="diff" aria-label={`Changes from version ${v1} to version ${v2}`}>
      <pre tabIndex={0}>
        {lines.map((line, i) => (
          <div key={i} class={lineClass(line)}>
            {line || ' '}
          </div>
        ))}
      </pre>
      {diff.kind === 'json' && diff.json_patch && (
        <ul class="patch" aria-label="JSON Patch">
          {diff.json_patch.map((op, i) => (
            <li key={i}>
              <code>{op.op}</code> <code>{op.path}</code>
              {op.value !== undefined && <> → <code>{JSON.stringify(op.value)}</code></>}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}

function lineClass(line: string): string {
  if (line.startsWith('--- ') || line.startsWith('+++ ') || line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return '';
}
