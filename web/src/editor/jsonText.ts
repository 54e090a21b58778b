/** JSON as the editor shows it (two-space indentation), and the editor's text checked back. */
export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}
