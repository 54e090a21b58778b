/**
 * A search snippet with its matched words marked. The server marks them `**like this**` in plain
 * text; the snippet is rendered as text nodes and `<mark>` elements, so nothing in it is ever read
 * as HTML. Markdown uses the same `**` for bold, so a `**…**` pair is a mark only when it holds a
 * word of the query (or a word sharing its stem: "installer" marks "Install"); other pairs stay as
 * the text they are.
 */
export function Snippet({ text, query }: { text: string; query: string }) {
  return (
    <span class="snippet">
      {snippetParts(text.replace(/\n\s*\n/g, '\n'), query).map((part, i) => (part.marked ? <mark key={i}>{part.text}</mark> : part.text))}
    </span>
  );
}

export function snippetParts(text: string, query: string): { text: string; marked: boolean }[] {
  const stems = wordsOf(query).map(stem);
  const parts: { text: string; marked: boolean }[] = [];
  let last = 0;
  const pair = /\*\*([^*]+?)\*\*/g;
  let m: RegExpExecArray | null;
  while ((m = pair.exec(text))) {
    if (!wordsOf(m[1]!).some((w) => stems.some((s) => w.startsWith(s) || s.startsWith(stem(w))))) {
      // Not a mark (Markdown's own bold): its closing `**` may open the next mark, so look again from there.
      pair.lastIndex = m.index + 2;
      continue;
    }
    if (m.index > last) parts.push({ text: text.slice(last, m.index), marked: false });
    parts.push({ text: m[1]!, marked: true });
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), marked: false });
  return parts;
}

const wordsOf = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
/** A rough stem: the word without its last three letters, keeping at least three. */
const stem = (w: string) => w.slice(0, Math.max(3, w.length - 3));
