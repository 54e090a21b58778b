import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Local stand-ins for the LLM providers, speaking their real streaming wire formats so the
 * official SDKs run unmodified against them:
 *
 * - `startFakeOpenAi()`: `POST /v1/chat/completions` with `stream: true` (SSE `data:` lines of
 *   `chat.completion.chunk`, tool-call arguments split over several deltas, a usage chunk when the
 *   request asked for `stream_options.include_usage`, then `data: [DONE]`). Its `url` ends in `/v1`,
 *   as the OpenAI SDK's baseURL does.
 * - `startFakeAnthropic()`: `POST /v1/messages` streaming (`message_start`, `content_block_start`
 *   / `_delta` / `_stop` for text and tool_use blocks, `message_delta` with stop_reason and usage,
 *   `message_stop`). Its `url` has no `/v1`, as the Anthropic SDK's baseURL does not.
 *
 * Each test scripts the replies, in order (`script(...)`); a request with nothing scripted gets a
 * 500 in the provider's error shape. Every request is recorded (`requests`), with a promise that
 * settles when the exchange is over.
 */
export interface FakeProvider {
  /** The baseURL to give the SDK. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Queues replies, answered one per request in order. */
  script(...replies: FakeReply[]): void;
  /** Answers requests when the queue is empty, from what each request carries (load tests: many conversations at once). */
  respondWith(responder: ((body: any) => FakeReply) | null): void;
  /** Keeps no record of requests (a long load test would hold them all). */
  recording: boolean;
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: any;
  /** Settles when the exchange is over: the reply was sent whole, or the client went away before its end. */
  closed: Promise<{ beforeEnd: boolean }>;
}

export interface FakeToolCall {
  /** Default: `call_<n>` (OpenAI) / `toolu_<n>` (Anthropic). */
  id?: string;
  name: string;
  /** An object is sent as its JSON; a string is sent as is (to send invalid JSON). Either way split over several deltas. */
  arguments: Record<string, unknown> | string;
}

export interface FakeReply {
  /** Text pieces, one delta each, before any tool call. */
  text?: string[];
  toolCalls?: FakeToolCall[];
  /**
   * The provider's own finish/stop reason. Default: `tool_calls` / `tool_use` when there are tool
   * calls, else `stop` / `end_turn`. `null`: the stream ends after its pieces without finishing,
   * like a dropped reply.
   */
  finishReason?: string | null;
  /**
   * Instead of finishing, the stream carries the provider's in-stream error (Anthropic `event:
   * error`, OpenAI `data: {"error": ...}`) after its pieces, as when a model is overloaded mid-reply.
   */
  streamError?: { type: string; message: string };
  /** Default `{input: 11, output: 7}`. */
  usage?: { input: number; output: number };
  /** Sends nothing at all (not even the status) until the client goes away. */
  silent?: boolean;
  /** An error answer with this status, in the provider's error JSON shape. */
  status?: number;
  /** The error's message (default: a generic one for the status). */
  errorMessage?: string;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /**
   * After this many pieces (text pieces and tool-argument pieces), hold the rest of the stream until
   * `resume` settles; without `resume`, stall with the connection open until the client goes away.
   */
  pauseAfter?: number;
  resume?: Promise<unknown>;
}

/** One SSE frame of a reply; `piece` frames count for `pauseAfter`. */
interface Frame {
  text: string;
  piece: boolean;
}

interface Dialect {
  path: string;
  urlSuffix: string;
  frames(reply: FakeReply, request: any): Frame[];
  errorBody(status: number, message: string): unknown;
  errorHeaders: Record<string, string>;
}

export function startFakeOpenAi(): Promise<FakeProvider> {
  return startFake(openAiDialect);
}

export function startFakeAnthropic(): Promise<FakeProvider> {
  return startFake(anthropicDialect);
}

async function startFake(dialect: Dialect): Promise<FakeProvider> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  let responder: ((body: any) => FakeReply) | null = null;
  // eslint-disable-next-line prefer-const
  let fake: FakeProvider;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const closed = new Promise<{ beforeEnd: boolean }>((resolve) => res.once('close', () => resolve({ beforeEnd: !res.writableFinished })));
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      if (fake.recording) requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, closed });
      if (req.method !== 'POST' || req.url !== dialect.path) return sendError(res, dialect, 404, `fake: no route ${req.method} ${req.url}`, {});
      const reply = queue.shift() ?? responder?.(body);
      if (!reply) return sendError(res, dialect, 500, 'fake: no reply scripted for this request', {});
      void answer(res, dialect, reply, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  fake = {
    url: `http://127.0.0.1:${port}${dialect.urlSuffix}`,
    requests,
    recording: true,
    script: (...replies) => void queue.push(...replies),
    respondWith: (r) => void (responder = r),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

async function answer(res: ServerResponse, dialect: Dialect, reply: FakeReply, request: unknown): Promise<void> {
  if (reply.silent) return void (await new Promise<void>((r) => res.once('close', () => r())));
  if (reply.status && reply.status >= 400) {
    return sendError(res, dialect, reply.status, reply.errorMessage ?? defaultMessage(reply.status), reply.headers ?? {});
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...reply.headers });
  let pieces = 0;
  for (const frame of dialect.frames(reply, request)) {
    if (res.destroyed) return;
    res.write(frame.text);
    if (frame.piece && ++pieces === reply.pauseAfter) {
      // No resume: stall until the client goes away.
      await (reply.resume ?? new Promise<void>((r) => res.once('close', () => r())));
    }
  }
  res.end();
}

function sendError(res: ServerResponse, dialect: Dialect, status: number, message: string, headers: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json', ...dialect.errorHeaders, ...headers });
  res.end(JSON.stringify(dialect.errorBody(status, message)));
}

function defaultMessage(status: number): string {
  if (status === 401) return 'invalid api key';
  if (status === 429) return 'rate limit reached';
  if (status >= 500) return 'the server had an error';
  return 'bad request';
}

/** Splits a string into up to `n` non-empty pieces (JSON arguments arrive in pieces). */
function split(s: string, n = 3): string[] {
  if (s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function argumentsText(c: FakeToolCall): string {
  return typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
}

function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

const openAiDialect: Dialect = {
  path: '/v1/chat/completions',
  urlSuffix: '/v1',
  errorHeaders: { 'x-request-id': 'req_fake' },
  // https://platform.openai.com/docs/guides/error-codes: {error: {message, type, param, code}}
  errorBody: (status, message) => ({
    error: {
      message,
      type: status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error',
      param: null,
      code: status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : null,
    },
  }),
  frames(reply, request) {
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: String(request?.model ?? ''), system_fingerprint: null };
    const chunk = (delta: unknown, finish: string | null = null) => sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const frames: Frame[] = [{ text: chunk({ role: 'assistant', content: '', refusal: null }), piece: false }];
    for (const t of reply.text ?? []) frames.push({ text: chunk({ content: t }), piece: true });
    (reply.toolCalls ?? []).forEach((c, index) => {
      const id = c.id ?? `call_${index}`;
      frames.push({ text: chunk({ tool_calls: [{ index, id, type: 'function', function: { name: c.name, arguments: '' } }] }), piece: false });
      for (const p of split(argumentsText(c))) frames.push({ text: chunk({ tool_calls: [{ index, function: { arguments: p } }] }), piece: true });
    });
    if (reply.streamError) return [...frames, { text: sse({ error: { ...reply.streamError, param: null, code: null } }), piece: false }];
    if (reply.finishReason === null) return frames;
    const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    frames.push({ text: chunk({}, finish), piece: false });
    if (request?.stream_options?.include_usage) {
      const u = reply.usage ?? { input: 11, output: 7 };
      frames.push({ text: sse({ ...base, choices: [], usage: { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output } }), piece: false });
    }
    frames.push({ text: 'data: [DONE]\n\n', piece: false });
    return frames;
  },
};

const anthropicDialect: Dialect = {
  path: '/v1/messages',
  urlSuffix: '',
  errorHeaders: { 'request-id': 'req_fake' },
  // https://docs.anthropic.com/en/api/errors: {type: 'error', error: {type, message}, request_id}
  errorBody: (status, message) => ({
    type: 'error',
    error: {
      type:
        status === 401 ? 'authentication_error'
        : status === 403 ? 'permission_error'
        : status === 404 ? 'not_found_error'
        : status === 429 ? 'rate_limit_error'
        : status === 529 ? 'overloaded_error'
        : status >= 500 ? 'api_error'
        : 'invalid_request_error',
      message,
    },
    request_id: 'req_fake',
  }),
  frames(reply, request) {
    const u = reply.usage ?? { input: 11, output: 7 };
    const frames: Frame[] = [
      {
        text: sse(
          {
            type: 'message_start',
            message: {
              id: 'msg_fake', type: 'message', role: 'assistant', model: String(request?.model ?? ''), content: [],
              stop_reason: null, stop_sequence: null,
              usage: { input_tokens: u.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
            },
          },
          'message_start',
        ),
        piece: false,
      },
      { text: sse({ type: 'ping' }, 'ping'), piece: false },
    ];
    let index = 0;
    if (reply.text?.length) {
      frames.push({ text: sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } }, 'content_block_start'), piece: false });
      for (const t of reply.text) frames.push({ text: sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } }, 'content_block_delta'), piece: true });
      frames.push({ text: sse({ type: 'content_block_stop', index }, 'content_block_stop'), piece: false });
      index++;
    }
    (reply.toolCalls ?? []).forEach((c, n) => {
      const block = { type: 'tool_use', id: c.id ?? `toolu_${n}`, name: c.name, input: {}, caller: { type: 'direct' } };
      frames.push({ text: sse({ type: 'content_block_start', index, content_block: block }, 'content_block_start'), piece: false });
      // The API opens with an empty piece, then the JSON in pieces.
      for (const p of ['', ...split(argumentsText(c))]) {
        frames.push({ text: sse({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } }, 'content_block_delta'), piece: p !== '' });
      }
      frames.push({ text: sse({ type: 'content_block_stop', index }, 'content_block_stop'), piece: false });
      index++;
    });
    if (reply.streamError) return [...frames, { text: sse({ type: 'error', error: reply.streamError, request_id: 'req_fake' }, 'error'), piece: false }];
    if (reply.finishReason === null) return frames;
    const stop = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn');
    frames.push({
      text: sse({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null, stop_details: null, container: null }, usage: { output_tokens: u.output } }, 'message_delta'),
      piece: false,
    });
    frames.push({ text: sse({ type: 'message_stop' }, 'message_stop'), piece: false });
    return frames;
  },
};
