import type { NodeType } from '../api/types.ts';

/**
 * A small drawn icon per node type (decorative: each row's name says its type). SVG rather
 * than emoji, which many systems (headless servers, some Linux desktops) cannot draw.
 */
export function NodeIcon({ type, open = false }: { type: NodeType; open?: boolean }) {
  return (
    <svg class={`icon icon-${type}`} width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      {type === 'folder' ? (
        open ? (
          <path d="M1 4h5l1.5 1.5H14v1.5H4L1.5 13H1zM4 7.5h11L12.5 13H1.5z" fill="#d9a43b" />
        ) : (
          <path d="M1 3.5h5L7.5 5H15v8.5H1z" fill="#e2b24a" />
        )
      ) : (
        <>
          <path d="M3 1h7l3 3v11H3z" fill="#fff" stroke="#7a8291" />
          {type === 'markdown' && <text x="8" y="12" font-size="6.5" text-anchor="middle" fill="#2455c3" font-family="sans-serif" font-weight="bold">M↓</text>}
          {type === 'json' && <text x="8" y="12" font-size="6.5" text-anchor="middle" fill="#1e7a34" font-family="monospace" font-weight="bold">{'{}'}</text>}
        </>
      )}
    </svg>
  );
}
