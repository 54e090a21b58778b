/** A timestamp as the reader's locale writes it; `never` for a missing one. */
export const when = (iso: string | null, never = 'never'): string => (iso ? new Date(iso).toLocaleString() : never);

/** The subtree a key or endpoint reaches: '' is the whole project. */
export const scopeLabel = (path: string | null): string => (path ? `/${path}` : 'whole project');

export const modeLabel = (mode: 'read' | 'read_write'): string => (mode === 'read' ? 'read only' : 'read and write');

/** Who a member is, for labels: "Ada (ada@example.com)" or the address alone. */
export const personLabel = (m: { email: string; display_name: string }): string =>
  m.display_name && m.display_name !== m.email ? `${m.display_name} (${m.email})` : m.email;
