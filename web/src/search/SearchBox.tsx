import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import { Snippet } from './Snippet.tsx';
import type { SearchAnswer, SearchIndexState, SearchTool } from './types.ts';

interface Props {
  projectId: string;
  /** Opens a result's node in the tree (rejects when it cannot be opened). */
  onOpen: (path: string) => Promise<void>;
  /** The words the address searches for (`/search?q=`); null when it names no search. */
  query: string | null;
  /** A search asked for (or cleared, ''): the address follows, then `query`. */
  onQuery: (q: string) => void;
}

/** Waits between two index-status polls: doubling from half a second, never more than five. */
const POLL_FIRST_MS = 500;
const POLL_MAX_MS = 5000;

/**
 * The project's search: a query over one of its search tools (`POST /tools/{id}/search`), each
 * result a button that opens its node in the tree. Without a search tool it offers to create one
 * (`POST /tools/search`) and follows its index until it is ready.
 */
export function SearchBox({ projectId, onOpen, query, onQuery }: Props) {
  const [tools, setTools] = useState<SearchTool[] | null>(null);
  const [toolId, setToolId] = useState('');
  const [index, setIndex] = useState<SearchIndexState | null>(null);
  const [text, setText] = useState('');
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setTools(null);
    setAnswer(null);
    api<{ tools: SearchTool[] }>('GET', `/tools/by-project/${projectId}`)
      .then((r) => {
        const search = r.tools.filter((t) => t.type === 'search');
        setTools(search);
        setToolId(search[0]?.id ?? '');
      })
      .catch((err: Error) => {
        setTools([]);
        setError(`Search tools could not be listed: ${err.message}`);
      });
  }, [projectId]);

  // The index state, polled (at a bounded interval) until it is ready or failed.
  useEffect(() => {
    setIndex(null);
    if (!toolId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (wait: number) => {
      try {
        const state = await api<SearchIndexState>('GET', `/tools/${toolId}/search-index`);
        if (stopped) return;
        setIndex(state);
        if (state.status === 'ready' || state.status === 'error') return;
      } catch (err) {
        if (stopped) return;
        setError(`Index status unavailable: ${(err as Error).message}`);
      }
      timer = setTimeout(() => void poll(Math.min(POLL_MAX_MS, wait * 2)), wait);
    };
    void poll(POLL_FIRST_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [toolId]);

  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ tool: SearchTool; index: SearchIndexState }>('POST', '/tools/search', { project_id: projectId, name: 'Search' });
      setTools([r.tool]);
      setToolId(r.tool.id);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 403
          ? `You may not create a search index in this project (${err.message}).`
          : `The search index could not be created: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };

  // The address names the search: run it when it changes (a submit, a link, back/forward).
  useEffect(() => {
    const q = (query ?? '').trim();
    if (!q) {
      setAnswer(null);
      return;
    }
    setText(q);
    if (toolId && answer?.query !== q) void run(q);
  }, [query, toolId]);

  const search = (e: Event) => {
    e.preventDefault();
    const q = text.trim();
    if (!q || !toolId) return;
    if (q === (query ?? '').trim()) void run(q);
    else onQuery(q);
  };

  const run = async (q: string) => {
    setBusy(true);
    setError(null);
    try {
      setAnswer(await api<SearchAnswer>('POST', `/tools/${toolId}/search`, { query: q, top_k: 20 }));
    } catch (err) {
      setAnswer(null);
      setError(`Search failed: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const open = (path: string) => {
    onOpen(path).catch((err: Error) => setError(`Cannot open ${path}: ${err.message}`));
  };

  return (
    <section class="search" aria-label="Project search">
      {tools === null ? (
        <p aria-busy="true" class="muted">Loading search…</p>
      ) : tools.length === 0 ? (
        <div class="search-offer">
          <p class="muted">This project has no search index yet.</p>
          <button type="button" disabled={busy} onClick={() => void create()}>Create a search index</button>
        </div>
      ) : (
        <form role="search" aria-label="Search the project" class="search-form" onSubmit={search}>
          {tools.length > 1 && (
            <label>
              Search tool
              <select value={toolId} onChange={(e) => setToolId(e.currentTarget.value)}>
                {tools.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
              </select>
            </label>
          )}
          <label>
            Search
            <input type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="Words to find" />
          </label>
          <button type="submit" disabled={busy || !text.trim()}>Search</button>
        </form>
      )}
      {index && index.status !== 'ready' && (
        <p role="status" class="muted index-status">
          {index.status === 'error'
            ? `Index: error${index.last_error ? ` (${index.last_error})` : ''}; lexical search still answers.`
            : `Index: ${index.status}, ${index.documents} documents so far${index.lag_versions ? `, ${index.lag_versions} versions behind` : ''}…`}
        </p>
      )}
      {index?.status === 'ready' && !answer && <p role="status" class="muted index-status">Index ready: {index.documents} documents.</p>}
      {error && <p role="alert" class="error">{error}</p>}
      {answer && (
        <div class="hits" aria-label="Search results" role="region">
          <p role="status" class="muted">
            {answer.results.length === 0 ? `Nothing found for “${answer.query}”.` : `${answer.results.length} result${answer.results.length === 1 ? '' : 's'} for “${answer.query}”`}
            {answer.warning ? ` (${answer.warning})` : ''}{' '}
            <button type="button" class="link" onClick={() => onQuery('')}>Clear</button>
          </p>
          <ol>
            {answer.results.map((hit) => (
              <li key={`${hit.node_id}:${hit.chunk_index}`}>
                <button type="button" class="hit" onClick={() => open(hit.path)}>
                  <span class="hit-path">{hit.path}</span>
                  {hit.heading_path && <span class="hit-heading"> › {hit.heading_path}</span>}
                </button>
                <Snippet text={hit.snippet} query={answer.query} />
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
