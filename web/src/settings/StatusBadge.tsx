/** A connection's state in words (the colour only repeats them). */
export function StatusBadge({ status, detail }: { status: string; detail?: string | null }) {
  return (
    <span class={`status-badge ${status}`}>
      {status}
      {detail ? ` (${detail})` : ''}
    </span>
  );
}
