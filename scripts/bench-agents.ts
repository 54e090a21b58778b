/**
 * Issue 14's agent chat figures, against a server in its own process and a local provider that
 * speaks the OpenAI streaming format (the one the tests use), reached by the real SDK:
 *   1. our overhead: request → first `text` event, minus the provider's own time to first text
 *      (the same SDK adapter calling the same local provider directly, in the same run), p50
 *      (target < 20 ms); and per tool round trip (cat): tool_call event → first text after the
 *      tool result, minus the provider's own time to first text, p50 (target < 15 ms);
 *   2. 50 concurrent chat streams, each one tool call (cat) then 200 streamed tokens: all complete,
 *      none carries another's events (every token of a stream is tagged with its conversation),
 *      p50/p99 of the whole turn.
 * Run: node --import=tsx scripts/bench-agents.ts [turns=200]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiProvider } from '../src/llm/openaiProvider.ts';
import { chat, type ChatEvent } from '../test/agents/chatClient.ts';
import { startFakeOpenAi, type FakeReply } from '../test/agents/fakeProviders.ts';
import type { TestServer } from '../test/helpers/server.ts';
import { fmt } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const TURNS = Number(process.argv[2] ?? 200);
const STREAMS = 50;
const TOKENS = 200;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-agents-'));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** What the local provider answers, from the conversation's last user message (`plain:`, `tool:`, `big:<id>`). */
function reply(body: { messages: { role: string; content: unknown }[] }): FakeReply {
  const user = [...body.messages].reverse().find((m) => m.role === 'user')!.content as string;
  const answered = body.messages.some((m) => m.role === 'tool');
  const [kind, id] = user.split(':');
  if (kind === 'plain') return { text: ['Hello', ' there.'] };
  if (!answered) return { toolCalls: [{ name: 'cat', arguments: { path: 'docs/a.md' } }] };
  if (kind === 'tool') return { text: ['Read', ' it.'] };
  return { text: Array.from({ length: TOKENS }, (_, i) => `${id}-${i} `) };
}

async function main(): Promise<void> {
  const fake = await startFakeOpenAi();
  fake.recording = false;
  fake.respondWith(reply);
  const server = await startBenchServer(work, { CNS_OPENAI_BASE_URL: fake.url, CNS_OPENAI_API_KEY: 'sk-bench' });
  const client = { url: server.url } as TestServer;
  try {
    const { token, projectId } = await benchProject(server.url);
    await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: 'docs/a.md', node_type: 'markdown', content: '# Alpha\n' + 'The alpha document. '.repeat(50) });
    const docs = await api(server.url, 'GET', `/content/${projectId}/stat?path=docs`, token);
    const created = await api(server.url, 'POST', '/agent-config/', token, { name: 'bench', project_id: projectId, system_prompt: 'You read docs.', model: 'openai:gpt-bench' });
    const agentId = created.agent.id as string;
    await api(server.url, 'POST', `/agent-config/${agentId}/accesses`, token, { node_id: docs.id, mode: 'read_write' });

    // The provider's own time to first text, through the same adapter the server uses.
    const direct = new OpenAiProvider({ name: 'openai', apiKey: 'sk-bench', baseURL: fake.url });
    const providerFirstText = async (message: string): Promise<number> => {
      const t0 = performance.now();
      for await (const e of direct.stream({ model: 'gpt-bench', system: 'x', messages: [{ role: 'user', content: message }], tools: [], signal: new AbortController().signal })) {
        if (e.type === 'text') return performance.now() - t0;
      }
      throw new Error('no text');
    };

    const turn = async (message: string) => {
      const t0 = performance.now();
      let firstText = 0;
      let toolCallAt = 0;
      let textAfterTool = 0;
      const answer = await chat(client, token, { agent_id: agentId, message }, (e: ChatEvent) => {
        const now = performance.now() - t0;
        if (e.type === 'text' && !firstText) firstText = now;
        if (e.type === 'tool_call') toolCallAt = now;
        if (e.type === 'text' && toolCallAt && !textAfterTool) textAfterTool = now;
      });
      const done = answer.events.at(-1);
      if (done?.type !== 'done' || done.status !== 'succeeded') throw new Error(`turn failed: ${JSON.stringify(answer.events.slice(-2))}`);
      return { firstText, toolRound: textAfterTool - toolCallAt, total: performance.now() - t0, events: answer.events };
    };

    for (let i = 0; i < 20; i++) await Promise.all([turn(`plain:w${i}`), providerFirstText('plain:w'), turn(`tool:w${i}`)]); // warm-up
    const chatFirst: number[] = [];
    const providerFirst: number[] = [];
    const toolRounds: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      // Interleaved, so that both sides see the same machine.
      providerFirst.push(await providerFirstText(`plain:${i}`));
      chatFirst.push((await turn(`plain:${i}`)).firstText);
      toolRounds.push((await turn(`tool:${i}`)).toolRound);
    }
    const p50Provider = percentile(sorted(providerFirst), 0.5);
    const p50Chat = percentile(sorted(chatFirst), 0.5);
    const p50Tool = percentile(sorted(toolRounds), 0.5);
    console.log(`figure 1 (${TURNS} turns, one at a time; load ${loadavg()[0]!.toFixed(2)})`);
    console.log(`  provider alone, request → first text: p50 ${fmt(p50Provider)} ms, p99 ${fmt(percentile(sorted(providerFirst), 0.99))} ms`);
    console.log(`  POST /agents → first text event:       p50 ${fmt(p50Chat)} ms, p99 ${fmt(percentile(sorted(chatFirst), 0.99))} ms`);
    console.log(`  our overhead to first text:            p50 ${fmt(p50Chat - p50Provider)} ms (target < 20)`);
    console.log(`  tool_call → next text (cat round):     p50 ${fmt(p50Tool)} ms; beyond the provider: ${fmt(p50Tool - p50Provider)} ms (target < 15)`);

    // Figure 2: 50 streams at once, each a tool call then 200 tagged tokens.
    const t0 = performance.now();
    const results = await Promise.allSettled(Array.from({ length: STREAMS }, (_, i) => turn(`big:c${i}`)));
    const wall = performance.now() - t0;
    const failed = results.filter((r) => r.status === 'rejected');
    let mixed = 0;
    const totals: number[] = [];
    results.forEach((r, i) => {
      if (r.status !== 'fulfilled') return;
      totals.push(r.value.total);
      const text = r.value.events.filter((e) => e.type === 'text').map((e) => e.content as string).join('');
      const expected = Array.from({ length: TOKENS }, (_, k) => `c${i}-${k} `).join('');
      const call = r.value.events.find((e) => e.type === 'tool_call');
      const result = r.value.events.find((e) => e.type === 'tool_result');
      if (text !== expected || !call || !result || result.id !== call.id || result.is_error) mixed++;
    });
    const s = sorted(totals);
    console.log(`figure 2 (${STREAMS} concurrent streams, one cat then ${TOKENS} tokens each; load ${loadavg()[0]!.toFixed(2)})`);
    console.log(`  completed ${totals.length}/${STREAMS}, failed ${failed.length}, streams with foreign or missing events ${mixed}`);
    console.log(`  turn time p50 ${fmt(percentile(s, 0.5))} ms, p99 ${fmt(percentile(s, 0.99))} ms, all ${fmt(wall)} ms`);
    if (failed.length) console.log(`  first failure: ${(failed[0] as PromiseRejectedResult).reason}`);
  } finally {
    await server.stop();
    await fake.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
