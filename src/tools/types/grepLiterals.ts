/**
 * Strings that every line a pattern matches must contain, each of at least 3 characters, for the
 * trigram index to narrow grep's candidates with: an empty answer means "scan everything". It
 * must never name a string some match lacks, so it is conservative: fixed strings are their
 * own literal; a regular expression gives the runs of plain characters at its top level only,
 * and none at all when it has an alternation (`|`), a group with flags (`(?`), `\Q…\E`, or a
 * brace it does not read as a repetition. A quantified character leaves its run (`ab?c`: "a",
 * "c"); classes, `.`, anchors and escapes like `\d` end a run; what lies inside a group is left out.
 * With ignore_case, a literal keeps only its ASCII characters whose case variants are all ASCII
 * (RE2 matches `k` with the Kelvin sign and `s` with `ſ`, which the index does not fold alike),
 * split where others were.
 */
export function requiredLiterals(pattern: string, fixed: boolean, ignoreCase: boolean): string[] {
  const runs = fixed ? [pattern] : regexRuns(pattern);
  if (runs === null) return [];
  const pieces = ignoreCase ? runs.flatMap((r) => r.split(/[^\x20-\x7e]|[ksKS]/)) : runs;
  return pieces.filter((p) => [...p].length >= 3);
}

const META = new Set(['.', '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\']);

/** The top-level runs of plain characters of an RE2 pattern, or null when it cannot tell. */
function regexRuns(p: string): string[] | null {
  const runs: string[] = [];
  let run = '';
  let depth = 0;
  const end = () => {
    if (depth === 0 && run !== '') runs.push(run);
    run = '';
  };
  const chars = [...p];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '|') return null;
    if (c === '\\') {
      const n = chars[i + 1];
      if (n === undefined || n === 'Q') return null;
      i++;
      if (/[0-9A-Za-z]/.test(n)) end(); // \d, \w, \b, \x41, \pL, \n…: not read as plain characters here
      else if (depth === 0) run += n; // an escaped punctuation character is itself
      continue;
    }
    if (c === '[') {
      end();
      let j = i + 1;
      if (chars[j] === '^') j++;
      if (chars[j] === ']') j++;
      for (; j < chars.length && chars[j] !== ']'; j++) {
        if (chars[j] === '\\') j++;
        else if (chars[j] === '[' && chars[j + 1] === ':') {
          const close = chars.indexOf(':', j + 2);
          if (close < 0 || chars[close + 1] !== ']') return null;
          j = close + 1;
        }
      }
      if (j >= chars.length) return null;
      i = j;
      continue;
    }
    if (c === '(') {
      if (chars[i + 1] === '?') return null;
      end();
      depth++;
      continue;
    }
    if (c === ')') {
      end();
      depth--;
      if (depth < 0) return null;
      continue;
    }
    if (c === '*' || c === '?' || c === '{') {
      if (c === '{') {
        const m = /^\{\d+(,\d*)?\}/.exec(chars.slice(i).join(''));
        if (!m) return null;
        i += [...m[0]].length - 1;
      }
      // The quantified character may be absent: it leaves the run.
      const kept = [...run];
      kept.pop();
      run = kept.join('');
      end();
      continue;
    }
    if (c === '+') {
      end();
      continue;
    }
    if (c === '.' || c === '^' || c === '$' || c === '}' || c === ']') {
      end();
      continue;
    }
    if (depth === 0) run += c;
    else if (META.has(c)) end();
  }
  if (depth !== 0) return null;
  end();
  return runs;
}
