import { chatChunkStream, httpError, type ReconnectPolicy } from './chat-connection.js';
import { ChatPlaces, defaultStorage, type ChatPlaceStorage } from './chat-state.js';
import { turnOfMessageId, type LogbookUIChunk } from './ui-chunks.js';

/** A UI message as the AI SDK's `useChat` holds it (the fields the transport reads). */
export interface UIMessageLike {
  id: string;
  role: 'system' | 'user' | 'assistant';
  parts: readonly { type: string }[];
}

/** What the AI SDK's Chat passes to `sendMessages` (ChatTransport in the `ai` package). */
export interface SendMessagesOptions<M extends UIMessageLike> {
  trigger: 'submit-message' | 'regenerate-message';
  chatId: string;
  messageId: string | undefined;
  messages: M[];
  abortSignal: AbortSignal | undefined;
  headers?: Record<string, string> | Headers;
  body?: object;
  metadata?: unknown;
}

/** The Chat a transport replays a message into (any of the AI SDK's Chat classes). */
export interface ChatLike {
  readonly id: string;
  readonly status: string;
  resumeStream(): Promise<void>;
}

export type HeadersOption = Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);

export interface LogbookChatTransportOptions<M extends UIMessageLike = UIMessageLike> {
  /** Base URL of the Logbook HTTP API (`http://127.0.0.1:8787`, or your app's proxy path such as `/api/logbook`). */
  api: string;
  /** Base URL GET /runs/{id}/chat is read from, when not `api` (on AWS: the construct's StreamUrl, through your signing proxy). */
  streamApi?: string;
  /** The agent each new chat starts (POST /runs). */
  agent: string;
  version?: string;
  budgets?: Record<string, number>;
  /** Sent with every request (a function is called each time: fresh tokens). */
  headers?: HeadersOption;
  /** Your fetch (SigV4 signing, cookies, a test server). */
  fetch?: typeof fetch;
  /** The run input for a user message: by default its text parts, joined by newlines. */
  input?: (message: M) => string | Record<string, unknown> | unknown[];
  /** The run id of a chat (default: the chat id itself). */
  runId?: (chatId: string) => string;
  /** Where each chat's last cursor is kept across page reloads (default: localStorage when there is one; null: memory only). */
  storage?: ChatPlaceStorage | null;
  reconnect?: ReconnectPolicy;
}

/** An answer to an approval, as POST /runs/{runId}/approve takes it. */
export interface ApprovalAnswer {
  callId: string;
  decision: 'approve' | 'reject' | 'edit';
  args?: Record<string, unknown>;
  argsHash?: string;
  comment?: string;
}

const MESSAGE_ID = /^[A-Za-z0-9_-]{1,80}$/;

function textOf(message: UIMessageLike): string {
  const text = message.parts
    .filter((p): p is { type: 'text'; text: string } => p.type === 'text' && typeof (p as { text?: unknown }).text === 'string')
    .map((p) => p.text)
    .join('\n');
  if (!text.trim()) throw new Error('Logbook chat: a message without text (give the transport an `input` function for other parts)');
  return text;
}

/**
 * The AI SDK's ChatTransport over a Logbook run (`useChat({ transport })`). A chat is a run: its
 * id is the run id. The first message starts the run (POST /runs), later ones are follow-ups
 * (POST /runs/{id}/messages), an assistant message answered with `addToolApprovalResponse`
 * posts the decisions (POST /runs/{id}/approve), and each answer streams from
 * GET /runs/{id}/chat. A connection lost mid-answer is resumed from the last cursor, within
 * the same response; `reconnectToStream` (a page reload, `resume: true`) replays the message the
 * chat was showing from the log.
 *
 * A worker that dies mid-answer leaves text the client already shows: the log's answer replaces
 * it by a replay of the message, which needs the Chat (`attach`, or `logbookChat`). Without
 * one, the response goes on and the abandoned text stays until the message is replayed.
 */
export class LogbookChatTransport<M extends UIMessageLike = UIMessageLike> {
  private readonly places: ChatPlaces;
  private readonly chats = new Map<string, ChatLike>();
  private readonly answered = new Set<string>();

  constructor(private readonly options: LogbookChatTransportOptions<M>) {
    this.places = new ChatPlaces(options.storage === null ? undefined : (options.storage ?? defaultStorage()));
  }

  /** Replay into this Chat when text it shows must be taken back. Returns a function that detaches it. */
  attach(chat: ChatLike): () => void {
    this.chats.set(chat.id, chat);
    return () => {
      if (this.chats.get(chat.id) === chat) this.chats.delete(chat.id);
    };
  }

  /** The cursor of the last item applied in a chat (what a reconnect resumes from). */
  lastCursor(chatId: string): string | undefined {
    return this.places.get(chatId)?.cursor;
  }

  async sendMessages(options: SendMessagesOptions<M>): Promise<ReadableStream<LogbookUIChunk>> {
    if (options.trigger === 'regenerate-message') {
      throw new Error('Logbook chat: a run is append-only and cannot regenerate an answer (fork the run: POST /runs/{runId}/fork)');
    }
    const runId = this.runIdOf(options.chatId);
    const headers = await this.headers(options.headers);
    const last = options.messages.at(-1);
    if (!last) throw new Error('Logbook chat: no message to send');
    let params: Record<string, string>;
    if (last.role === 'user') {
      const prior = options.messages.slice(0, -1).findLast((m) => m.role === 'assistant');
      const input = this.options.input ? this.options.input(last) : textOf(last);
      if (!prior) {
        await this.post('/runs', { agent: this.options.agent, input, runId, ...this.runFields() }, headers, 'start');
        params = { from: '0' };
      } else {
        const turn = turnOfMessageId(runId, prior.id) ?? this.places.get(options.chatId)?.turn;
        if (turn === undefined) throw new Error(`Logbook chat: message ${prior.id} is not an answer of run ${runId}`);
        await this.post(
          `/runs/${encodeURIComponent(runId)}/messages`,
          { input, ...(MESSAGE_ID.test(last.id) ? { messageId: last.id } : {}) },
          headers,
          'message',
        );
        params = { from: String(turn) };
      }
    } else {
      // The message goes on (after approvals): from where its last response stopped.
      const place = this.places.get(options.chatId) ?? (await this.placeAtEnd(runId, options.chatId, last.id, headers));
      await this.answerApprovals(runId, last, headers);
      params = { after: place.cursor };
    }
    const stream = await this.open(runId, options.chatId, params, headers, options.abortSignal);
    if (!stream) throw new Error(`Logbook chat: run ${runId} has no answer to stream`);
    return stream;
  }

  async reconnectToStream(options: {
    chatId: string;
    abortSignal?: AbortSignal;
    headers?: Record<string, string> | Headers;
  }): Promise<ReadableStream<LogbookUIChunk> | null> {
    const place = this.places.get(options.chatId);
    if (place?.finished) return null;
    const runId = this.runIdOf(options.chatId);
    const headers = await this.headers(options.headers);
    // Replay the message the chat showed, from its start: the Chat rebuilds it from the log.
    const params: Record<string, string> = place ? { after: place.cursor, replay: 'true' } : {};
    return this.open(runId, options.chatId, params, headers, options.abortSignal);
  }

  /** Answer an approval directly (edits included); the chat then goes on with `sendMessage()`. */
  async approve(chatId: string, answer: ApprovalAnswer): Promise<void> {
    await this.post(`/runs/${encodeURIComponent(this.runIdOf(chatId))}/approve`, answer, await this.headers(undefined), 'approval');
    this.answered.add(`${this.runIdOf(chatId)}:${answer.callId}`);
  }

  private runIdOf(chatId: string): string {
    return this.options.runId ? this.options.runId(chatId) : chatId;
  }

  private runFields(): Record<string, unknown> {
    return { ...(this.options.version ? { version: this.options.version } : {}), ...(this.options.budgets ? { budgets: this.options.budgets } : {}) };
  }

  private async headers(extra: Record<string, string> | Headers | undefined): Promise<Record<string, string>> {
    const base = typeof this.options.headers === 'function' ? await this.options.headers() : (this.options.headers ?? {});
    const more = extra instanceof Headers ? Object.fromEntries(extra.entries()) : (extra ?? {});
    return { ...base, ...more };
  }

  private fetch(url: string, init: RequestInit): Promise<Response> {
    return (this.options.fetch ?? globalThis.fetch)(url, init);
  }

  private async post(path: string, body: unknown, headers: Record<string, string>, what: string): Promise<Response> {
    const res = await this.fetch(`${this.options.api}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw await httpError(res, what);
    return res;
  }

  /** POST the decisions of approvals answered in the message (addToolApprovalResponse), each once. */
  private async answerApprovals(runId: string, message: UIMessageLike, headers: Record<string, string>): Promise<void> {
    for (const part of message.parts as readonly { state?: string; toolCallId?: string; approval?: { id: string; approved?: boolean; reason?: string } }[]) {
      if (part.state !== 'approval-responded' || !part.approval || part.approval.approved === undefined) continue;
      const key = `${runId}:${part.approval.id}`;
      if (this.answered.has(key)) continue;
      const answer = {
        callId: part.approval.id,
        decision: part.approval.approved ? 'approve' : 'reject',
        ...(part.approval.reason ? { comment: part.approval.reason } : {}),
      };
      const res = await this.fetch(`${this.options.api}/runs/${encodeURIComponent(runId)}/approve`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(answer),
      });
      // 409: decided already (here, in another tab, or it expired): the stream tells which.
      if (!res.ok && res.status !== 409) throw await httpError(res, 'approval');
      this.answered.add(key);
    }
  }

  /** A cursor at the end of a message's items, when none was kept (another device): read from GET /runs/{id}/stream. */
  private async placeAtEnd(runId: string, chatId: string, messageId: string, headers: Record<string, string>) {
    const turn = turnOfMessageId(runId, messageId);
    if (turn === undefined) throw new Error(`Logbook chat: message ${messageId} is not an answer of run ${runId}`);
    let after = `${turn - 1}.0.0.-1`;
    for (;;) {
      const res = await this.fetch(`${this.options.api}/runs/${encodeURIComponent(runId)}/stream?limit=500&after=${after}`, { headers });
      if (!res.ok) throw await httpError(res, 'stream');
      const page = (await res.json()) as { items: unknown[]; next: string };
      after = page.next;
      if (page.items.length === 0) break;
    }
    const place = { cursor: `${turn - 1}.${after}`, turn, finished: false };
    this.places.set(chatId, place);
    return place;
  }

  private async open(runId: string, chatId: string, params: Record<string, string>, headers: Record<string, string>, signal: AbortSignal | undefined) {
    const base = this.options.streamApi ?? this.options.api;
    const request = (p: Record<string, string>, s: AbortSignal) =>
      this.fetch(`${base}/runs/${encodeURIComponent(runId)}/chat${Object.keys(p).length ? `?${new URLSearchParams(p).toString()}` : ''}`, {
        headers: { ...headers, accept: 'text/event-stream' },
        signal: s,
      });
    const first = await request(params, signal ?? new AbortController().signal);
    if (first.status === 204) {
      await first.body?.cancel();
      return null;
    }
    if (!first.ok) throw await httpError(first, 'chat stream');
    const ctx = {
      runId,
      chatId,
      places: this.places,
      request,
      policy: this.options.reconnect ?? {},
      onReplay: () => this.replay(chatId),
    };
    return chatChunkStream(first, params, ctx, signal);
  }

  /** Replay the chat's message into its Chat once the current response has settled. */
  private replay(chatId: string): boolean {
    const chat = this.chats.get(chatId);
    if (!chat) return false;
    void (async () => {
      for (let i = 0; i < 500 && (chat.status === 'streaming' || chat.status === 'submitted'); i++) await new Promise((r) => setTimeout(r, 10));
      await chat.resumeStream();
    })();
    return true;
  }
}
