import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import { z } from 'zod';
import type { NodeInfo } from '../../content/types.ts';
import { TimeSlice } from '../../content/timeSlice.ts';
import { invalidField } from '../../errors/domainError.ts';
import { pathInScope } from '../../policies/scope.ts';
import { GREP_MAX_SCAN_BYTES as MAX_SCAN_BYTES, grepTextOf } from '../../search/grepText.ts';
import { GREP_NONE, GREP_TEXT } from '../../search/searchIndex.ts';
import type { SearchQueries } from '../../search/searcher.ts';
import { defineToolType } from '../toolType.ts';
import { requiredLiterals } from './grepLiterals.ts';

/** Lines are answered up to this many characters (a minified file's one line would fill a context). */
const MAX_LINE_CHARS = 500;

export const grepInput = z
  .object({
    pattern: z.string().min(1, 'must not be empty').max(1000).describe('a regular expression (RE2 syntax: linear time, no backreferences), or a plain string with fixed_strings'),
    path_prefix: z.string().max(4096).optional().describe("only nodes beneath this path, relative to the tool's node"),
    fixed_strings: z.boolean().optional().describe('take the pattern as a plain string'),
    ignore_case: z.boolean().optional(),
    max_results: z.number().int().min(1).max(1000).optional().describe('matching lines to return (default 100, at most 1000)'),
    context_lines: z.number().int().min(0).max(10).optional().describe('lines before and after each match (default 0, at most 10)'),
  })
  .strict();

interface Match {
  path: string;
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

/**
 * Regular-expression search over the text of the nodes beneath a folder (Markdown, JSON as
 * stored, files that are UTF-8 text), line by line, as `grep -n` would: the nodes are read one
 * at a time and scanned in time slices, so a large tree never holds the event loop. Patterns run
 * on RE2 (re2js): matching is linear in the text whatever the pattern, so no pattern can stall
 * the service (no catastrophic backtracking); backreferences and lookaround are refused (422).
 */
export const grepTool = defineToolType({
  type: 'grep',
  summary: "Finds the lines matching a regular expression (RE2) in the text nodes beneath the tool's node, with line numbers and context.",
  binds: 'any',
  config: z.object({}).strict(),
  input: grepInput,
  async run(call) {
    const g = await call.grant('content:read');
    const { content, access } = call.env;
    let prefix = call.resolve(g, call.args.path_prefix, { listing: true, field: 'arguments.path_prefix' });
    const test = matcherOf(call.args.pattern, call.args.fixed_strings ?? false, call.args.ignore_case ?? false);
    const maxResults = call.args.max_results ?? 100;
    const context = call.args.context_lines ?? 0;
    const result = { pattern: call.args.pattern, matches: [] as Match[], truncated: false, used_index: false, files_scanned: 0, skipped: [] as { path: string; reason: string }[] };
    // The narrowest of: the tool's node, the prefix asked for, the caller's scope.
    if (!pathInScope(prefix, g.scope)) {
      if (!pathInScope(g.scope, prefix)) return result;
    } else prefix = g.scope.split('/').filter(Boolean).join('/');
    // The trigram index, when the project has one and the pattern a required literal: it says which nodes cannot match.
    const literals = requiredLiterals(call.args.pattern, call.args.fixed_strings ?? false, call.args.ignore_case ?? false);
    const queries = literals.length > 0 ? call.env.indexer.queries(g.projectId) : null;
    // An index that cannot answer (being deleted with its last search tool) leaves the scan to do it all.
    const skip = queries ? await cannotMatch(queries, literals, prefix).catch(() => null) : null;
    result.used_index = skip !== null;
    const slice = new TimeSlice(5);
    const scan = async (node: NodeInfo): Promise<boolean> => {
      if (!call.inTool(node.path) || !access.mayPath(g, node.path)) return true;
      if (node.size > MAX_SCAN_BYTES) {
        result.skipped.push({ path: node.path, reason: `larger than ${MAX_SCAN_BYTES} bytes` });
        return true;
      }
      if (skip?.(node)) return true;
      const { bytes } = await content.readContent(g.projectId, { id: node.id });
      const text = grepTextOf(node.type, bytes);
      if (text === null) return true;
      result.files_scanned++;
      const lines: string[] = [];
      let pending: Match[] = [];
      let start = 0;
      for (let n = 1; start < text.length; n++) {
        const nl = text.indexOf('\n', start);
        const line = text.slice(start, nl < 0 ? text.length : nl).replace(/\r$/, '');
        start = nl < 0 ? text.length : nl + 1;
        for (const m of pending) if (m.after && m.after.length < context) m.after.push(clip(line));
        pending = pending.filter((m) => m.after && m.after.length < context);
        if (test(line)) {
          if (result.matches.length >= maxResults) {
            result.truncated = true;
            return false;
          }
          const m: Match = { path: node.path, line: n, text: clip(line) };
          if (context > 0) {
            m.before = lines.slice(-context).map(clip);
            m.after = [];
            pending.push(m);
          }
          result.matches.push(m);
        }
        if (context > 0) {
          lines.push(line);
          if (lines.length > context) lines.shift();
        }
        if ((n & 0x3ff) === 0) await slice.tick();
      }
      await slice.tick();
      return true;
    };
    const walk = async (folder: string): Promise<boolean> => {
      for (const node of content.listChildren(g.projectId, folder)) {
        if (node.type === 'folder') {
          if (!(await walk(node.path))) return false;
        } else if (!(await scan(node))) return false;
      }
      return true;
    };
    const start = prefix === '' ? null : content.findByPath(g.projectId, prefix);
    if (start && start.type !== 'folder') await scan(start);
    else if (prefix === '' || start) await walk(prefix);
    return result;
  },
});

/**
 * The test "this node has no line the pattern matches", from the trigram index: true only for a
 * node the index holds with its current content (same content hash) and either no text grep
 * reads, or a text lacking one of the literals. Anything else (not indexed yet, changed since,
 * too large to index) is read and scanned, so the answer is the scan's whatever the index's lag.
 */
async function cannotMatch(queries: SearchQueries, literals: string[], prefix: string): Promise<(node: NodeInfo) => boolean> {
  const match = literals.map((l) => `"${l.replace(/"/g, '""')}"`).join(' AND ');
  const { docs, hits } = await queries.grepCandidates(match, prefix);
  const found = new Set(hits);
  const known = new Map(docs.map(([id, hash, state]) => [id, { hash, state }]));
  return (node) => {
    const d = known.get(node.id);
    if (!d || d.hash === null || d.hash !== node.contentHash) return false;
    return d.state === GREP_NONE || (d.state === GREP_TEXT && !found.has(node.id));
  };
}

const clip = (line: string) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);

/** re2js, required by the first pattern compiled: the registry imports every tool type at start-up. */
let re2: typeof RE2JS | undefined;

/** The line test: String.includes for a plain string, RE2 otherwise (a pattern RE2 refuses is a 422 naming it). */
function matcherOf(pattern: string, fixed: boolean, ignoreCase: boolean): (line: string) => boolean {
  if (fixed && !ignoreCase) return (line) => line.includes(pattern);
  re2 ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2JS }).RE2JS;
  let re: RE2JS;
  try {
    re = re2.compile(fixed ? re2.quote(pattern) : pattern, ignoreCase ? re2.CASE_INSENSITIVE : 0);
  } catch (e) {
    throw invalidField('arguments.pattern', `not a pattern RE2 takes: ${(e as Error).message}`);
  }
  return (line) => re.test(line);
}
