// The AI SDK's own chat client on a Logbook run, on the local stack (worker processes, the real
// worker handler, a streaming scripted model): @ai-sdk/react's Chat (the `ai` package's
// AbstractChat and its UI message processing) with logbook/chat's transport starts a run, shows
// the answer as it streams, stops at the approval, goes on once it is approved, and answers a
// follow-up; the assembled messages equal the log (each response's text, each tool call's input
// and output). Also: a connection dropped mid-answer resumes from the cursor with nothing
// twice; a worker killed mid-answer never leaves the abandoned attempt's text in the message; the
// chunks pass the `ai` package's own schema (DefaultChatTransport) and readUIMessageStream
// assembles the same message from a replay.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Chat } from '@ai-sdk/react';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookChatTransport, logbookChat, type ChatTransportCheck } from './chat-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { endpointsFor } from '../setup/emulator-context.js';
import { FIRST_TEXT, FOLLOW_UP_TEXT, SECOND_TEXT, THIRD_TEXT } from './chat-agents.fixture.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }> & { type: `tool-${string}`; state: string; input?: unknown; output?: unknown };

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const texts = (m: UIMessage | undefined) => (m?.parts ?? []).filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text').map((p) => p.text);
const tools = (m: UIMessage | undefined) => (m?.parts ?? []).filter((p): p is ToolPart => p.type.startsWith('tool-'));

/** What the log recorded: each model_response's text and each call's input and output, in order. */
async function fromLog(stack: LocalStack, runId: string) {
  const page = (await (await fetch(`${stack.apiUrl}/runs/${runId}/events?limit=500`)).json()) as { events: Record<string, unknown>[] };
  const responses: string[] = [];
  const calls: { callId: string; name: string; input: unknown; output?: unknown }[] = [];
  for (const e of page.events) {
    if (e.type === 'model_response') {
      responses.push((e.text as { value: string } | null)?.value ?? '');
      for (const c of e.calls as { callId: string; name: string; args: { value: unknown } }[])
        calls.push({ callId: c.callId, name: c.name, input: c.args.value });
    }
    if (e.type === 'tool_result') calls.find((c) => c.callId === e.callId)!.output = (e.output as { value: unknown }).value;
  }
  return { responses, calls, events: page.events };
}

/** A fetch that counts the chat connections, and breaks the first one after a few messages. */
function breakingFetch(breakFirstAfterBytes?: number) {
  const chatUrls: string[] = [];
  const f: typeof fetch = async (input, init) => {
    const url = String(input);
    const res = await fetch(input, init);
    if (!url.includes('/chat')) return res;
    chatUrls.push(url);
    if (breakFirstAfterBytes === undefined || chatUrls.length !== 1 || !res.body) return res;
    const reader = res.body.getReader();
    let seen = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        controller.enqueue(value);
        if (seen >= breakFirstAfterBytes) {
          await reader.cancel();
          controller.error(new TypeError('network connection lost'));
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: f, chatUrls };
}

describe.skipIf(!endpoints)('the AI SDK chat client on the local stack', () => {
  let stack: LocalStack;
  let workDir: string;
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-chat-'));
    stack = await startLocalStack({
      agentsModule: resolve('test/integration/chat-agents.fixture.ts'),
      port: 0,
      endpoints: endpoints!,
      prefix: `chat-${Date.now()}`,
      workDir,
      concurrency: 1,
      sweepEveryMs: 500,
      env: { LOGBOOK_SCRIPTED_PACE_MS: '120' },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  const newChat = (id: string, f?: typeof fetch) => {
    const transport = new LogbookChatTransport({ api: stack.apiUrl, agent: 'refunds', storage: null, ...(f ? { fetch: f } : {}) });
    const chat = logbookChat(Chat, { id, transport });
    return { chat, transport };
  };

  it('starts a run, stops at the approval, goes on once approved, answers a follow-up: the messages equal the log', async () => {
    const net = breakingFetch(400);
    const { chat } = newChat(`chat-${Date.now()}`, net.fetch);
    await chat.sendMessage({ text: 'Order 1001 arrived broken.' });
    expect(chat.error).toBeUndefined();
    // The first connection broke mid-answer: the transport came back with the last cursor.
    expect(net.chatUrls.length).toBeGreaterThanOrEqual(2);
    expect(net.chatUrls[0]).toMatch(/chat\?from=0$/);
    expect(net.chatUrls[1]).toMatch(/chat\?after=\d+\.\d+\.\d+\.\d+\.-?\d+$/);
    const answer = chat.messages[1]!;
    expect(answer.role).toBe('assistant');
    expect(answer.id).toBe(`${chat.id}:1`);
    expect(texts(answer)).toEqual([FIRST_TEXT, SECOND_TEXT]);
    const [lookup, refund] = tools(answer);
    expect(lookup).toMatchObject({ type: 'tool-lookup_order', state: 'output-available', input: { orderId: '1001' }, output: { paidEur: 42 } });
    expect(refund).toMatchObject({ type: 'tool-refund', state: 'approval-requested', input: { orderId: '1001', amountEur: 42 } });
    const approval = answer.parts.find((p) => p.type === 'data-approval') as { data: { status: string; tool: string; callId: string } };
    expect(approval.data).toMatchObject({ status: 'requested', tool: 'refund', callId: refund!.toolCallId });

    await chat.addToolApprovalResponse({ id: (refund as { approval: { id: string } }).approval.id, approved: true });
    await until('the answer after the approval', () => chat.status === 'ready' && texts(chat.messages[1]).length === 3);
    expect(chat.messages).toHaveLength(2);
    expect(texts(chat.messages[1])).toEqual([FIRST_TEXT, SECOND_TEXT, THIRD_TEXT]);
    expect(tools(chat.messages[1])[1]).toMatchObject({ state: 'output-available', output: { refundId: 'rf-1001', amountEur: 42 } });

    await chat.sendMessage({ text: 'Thanks!' });
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(texts(chat.messages[3])).toEqual([FOLLOW_UP_TEXT]);

    // Against the log: every response's text and every call, in order, nothing more.
    const log = await fromLog(stack, chat.id);
    expect(log.responses).toEqual([FIRST_TEXT, SECOND_TEXT, THIRD_TEXT, FOLLOW_UP_TEXT]);
    expect([...texts(chat.messages[1]), ...texts(chat.messages[3])]).toEqual(log.responses);
    const shown = [...tools(chat.messages[1]), ...tools(chat.messages[3])].map((p) => ({
      callId: p.toolCallId,
      name: p.type.slice(5),
      input: p.input,
      output: p.output,
    }));
    expect(shown).toEqual(log.calls);
    expect(chat.messages[3]!.id).toBe(`${chat.id}:${log.events.find((e) => e.type === 'user_message')!.seq as number}`);

    // The ai package's own parser (its chunk schema) and reader: a replay of the first answer.
    const sdk = new DefaultChatTransport<UIMessage>({ prepareReconnectToStreamRequest: () => ({ api: `${stack.apiUrl}/runs/${chat.id}/chat?from=0` }) });
    const stream = await sdk.reconnectToStream({ chatId: chat.id });
    let last: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: stream!, terminateOnError: true })) last = m;
    expect(last!.id).toBe(`${chat.id}:1`);
    expect(texts(last)).toEqual([FIRST_TEXT, SECOND_TEXT, THIRD_TEXT]);
    expect(tools(last).map((p) => p.state)).toEqual(['output-available', 'output-available']);
  }, 120_000);

  it('a worker killed mid-answer: the message never keeps the abandoned attempt, it shows the log', async () => {
    const net = breakingFetch();
    const { chat } = newChat(`killed-${Date.now()}`, net.fetch);
    const sent = chat.sendMessage({ text: 'Order 1001 arrived broken.' });
    await until('text streaming', () => (texts(chat.messages[1])[0]?.length ?? 0) > 20);
    const before = texts(chat.messages[1])[0]!;
    expect(FIRST_TEXT.startsWith(before) && before.length < FIRST_TEXT.length).toBe(true);
    expect(stack.runner.killBusyWorker()).toBe(true);
    await sent;
    // The replay the transport asked for ends at the approval as well.
    await until('the replayed answer at the approval', () => chat.status === 'ready' && texts(chat.messages[1]).length === 2, 90_000);
    expect(net.chatUrls.some((u) => u.includes('replay=true'))).toBe(true);
    const answer = chat.messages[1]!;
    expect(chat.messages).toHaveLength(2);
    expect(texts(answer)).toEqual([FIRST_TEXT, SECOND_TEXT]);
    expect(answer.parts.filter((p) => p.type === 'step-start')).toHaveLength(2);
    const log = await fromLog(stack, chat.id);
    expect(log.events.some((e) => e.type === 'model_started' && (e.seq as number) > 2)).toBe(true);
    expect(texts(answer)).toEqual(log.responses);
    expect(tools(answer).map((p) => p.toolCallId)).toEqual(log.calls.map((c) => c.callId));
  }, 150_000);

  it('type-checks as the ai package’s ChatTransport', () => {
    const check: ChatTransportCheck = new LogbookChatTransport({ api: 'http://127.0.0.1:1', agent: 'refunds', storage: null });
    expect(typeof check.sendMessages).toBe('function');
  });
});
