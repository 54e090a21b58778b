/**
 * A search snippet with its matched words marked. The server marks them `**like this**` in plain
 * text, one whole word per mark, and never inside the text's own `**bold**` (a match there stays
 * as written). The snippet is rendered as text nodes and `<mark>` elements, so nothing in it is
 * ever read as HTML. A `**…**` pair is a mark when it holds one word of the query (or a word
 * sharing its stem: "installer" marks "Install"); a bold phrase of the text around a match is
 * shown as written with the matching words marked inside; other pairs stay as the text they are.
 */
export function Snippet({ text, query }: { text: string; query: string }) {
  return (
    <span class="snippet">
      {snippetParts(text.replace(/\n\s*\n/g, '\n'), query).map((part, i) => (part.marked ? <mark key={i}>{part.text}</mark> : part.text))}
    </span>
  );
}

type Part = { text: string; marked: boolean };

export function snippetParts(text: string, query: string): Part[] {
  const stems = wordsOf(query).map(stem);
  const matches = (w: string) => stems.some((s) => w.startsWith(s) || s.startsWith(stem(w)));
  const parts: Part[] = [];
  const plain = (s: string) => s && parts.push({ text: s, marked: false });
  let last = 0;
  const pair = /\*\*([^*]+?)\*\*/g;
  let m: RegExpExecArray | null;
  while ((m = pair.exec(text))) {
    const inner = m[1]!;
    if (!wordsOf(inner).some(matches)) {
      // Not a mark (Markdown's own bold): its closing `**` may open the next mark, so look again from there.
      pair.lastIndex = m.index + 2;
      continue;
    }
    plain(text.slice(last, m.index));
    if (/^[\p{L}\p{N}]+$/u.test(inner)) parts.push({ text: inner, marked: true });
    else {
      // The text's own bold around a match: kept as written, the matching words marked inside.
      plain('**');
      for (const piece of inner.split(/([\p{L}\p{N}]+)/u)) {
        if (piece && /^[\p{L}\p{N}]+$/u.test(piece) && matches(piece.toLowerCase())) parts.push({ text: piece, marked: true });
        else plain(piece);
      }
      plain('**');
    }
    last = m.index + m[0].length;
  }
  plain(text.slice(last));
  return parts;
}

const wordsOf = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
/** A rough stem: the word without its last three letters, keeping at least three. */
const stem = (w: string) => w.slice(0, Math.max(3, w.length - 3));
