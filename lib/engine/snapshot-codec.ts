import type { Body } from '../core/body.js';
import type { LoggedCall, LoggedMessage } from '../core/messages.js';
import { rememberConversationChars, conversationChars } from '../core/budgets.js';
import { FOLD_VERSION, type CallResult, type CallState, type RunState } from '../core/state.js';

/**
 * The bytes of a snapshot: what a cold step downloads, hashes and parses before it can work, so
 * its size and shape are a cold step's cost per turn of history (docs/cost.md has the figures).
 *
 * One encoding. It writes what a long run is made of compactly, and anything else as is:
 * - A folded state holds every call's arguments and result twice, in `calls` and in the messages
 *   the model sees (the fold puts the same body object in both). Each is written once, in its
 *   message, and decoding puts the very same object back in the call.
 * - A call's provider id and tool name are its message's: written once too.
 * - Tool messages and assistant messages with inline bodies are tuples, not keyed objects; calls
 *   are a list, not a record keyed by id (parsing keys was most of a long run's decode time).
 * - A call settled the common way (its fields exactly those a plain start and result leave) rides
 *   in its assistant message's tuple; only the other calls are listed apart. Decoding rebuilds
 *   every call in its message's order, the order the fold created them in.
 * - A turn whose calls are all settled that way, followed by exactly their tool messages in its
 *   calls' order, is one tuple: per call, the entry above and its tool message's isError and output.
 * - The conversation's characters in the input-token estimate (core/budgets.ts), counted by the
 *   encoder: a cold container would otherwise serialize its whole history again to estimate.
 * A message or call of any other shape (a blob body, an edited argument, a field this codec does
 * not know) is written whole, so nothing is lost when the state grows a field.
 *
 * A snapshot is never required: one of another encoding or fold version, or anything that does
 * not restore exactly, decodes to undefined and the loader replays the log instead. So a change
 * of this encoding bumps ENCODING and decodes nothing older.
 */
const ENCODING = 5;

type InlineBody = Extract<Body, { kind: 'inline' }>;

/** A tool message with an inline result: [T, callId, providerId, name, isError, value]. */
type ToolTuple = [typeof TOOL, string, string, string, boolean, InlineBody['value']];
/**
 * An assistant message whose calls' args are inline: [A, text, ...entries], an entry being
 * [callId, providerId, name, args], or for a plain settled call
 * [callId, providerId, name, args, modelSeq, attempt, notAfter, ok, source].
 */
type AskedEntry = [string, string, string, InlineBody['value']];
type SettledEntry = [...AskedEntry, number, number, number, boolean, CallResult['source']];
type AssistantTuple = [typeof ASSISTANT, Body | null, ...(AskedEntry | SettledEntry)[]];
/** A turn: [U, text, ...entries], an entry being a SettledEntry, then its tool message's isError and output. */
type TurnEntry = [...SettledEntry, boolean, InlineBody['value']];
type TurnTuple = [typeof TURN, Body | null, ...TurnEntry[]];
type EncodedMessage = ToolTuple | AssistantTuple | TurnTuple | LoggedMessage;
const TOOL = 0;
const ASSISTANT = 1;
const TURN = 2;

/**
 * A call as written. `s` says what it left out, to be taken from its messages: `p` its provider
 * id and name, `a` its args (the assistant message's body), `o` its result's output (the tool
 * message's body).
 */
type EncodedCall = Omit<CallState, 'providerId' | 'name' | 'args' | 'result'> & {
  providerId?: string;
  name?: string;
  args?: Body;
  result?: Omit<CallResult, 'output'> & { output?: Body };
  s?: string;
};

interface Encoded {
  encoding: typeof ENCODING;
  state: Omit<RunState, 'calls' | 'messages'>;
  messages: EncodedMessage[];
  calls: EncodedCall[];
  /** [how many messages, their characters in the input-token estimate] (core/budgets.ts). */
  chars: [number, number];
}

export function encodeSnapshot(state: RunState): Uint8Array {
  const { calls, messages, ...rest } = state;
  const asked = new Map<string, LoggedCall>();
  // A call rides in its message's tuple only if its result's output is its tool message's body.
  // A call answered twice (no fold does that) is written apart: decoding settles a tupled call
  // with the first tool message that answers it.
  const answered = new Map<string, Body | undefined>();
  for (const m of messages) if (m.role === 'tool') answered.set(m.callId, answered.has(m.callId) ? undefined : m.content);
  const seen: CallsSeen = { calls, answered, settled: new Set() };
  const encodedMessages: EncodedMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const turn = m.role === 'assistant' ? encodeTurn(messages, i, asked, seen) : undefined;
    if (turn) i += turn.length - 2; // its tool messages are in it
    encodedMessages.push(turn ?? encodeMessage(m, asked, seen));
  }
  const { settled } = seen;
  const encodedCalls: EncodedCall[] = [];
  for (const call of Object.values(calls)) {
    if (!settled.has(call.callId)) encodedCalls.push(encodeCall(call, asked.get(call.callId), answered.get(call.callId)));
  }
  const encoded: Encoded = {
    encoding: ENCODING,
    state: rest,
    messages: encodedMessages,
    calls: encodedCalls,
    chars: [messages.length, conversationChars(messages)],
  };
  return new TextEncoder().encode(JSON.stringify(encoded));
}

/** The state in `bytes`, or undefined when they are not a snapshot of this fold version. */
export function decodeSnapshot(bytes: Uint8Array): RunState | undefined {
  const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { encoding?: unknown };
  return parsed.encoding === ENCODING ? decodeCompact(parsed as Encoded) : undefined;
}

function isInline(body: Body | null): body is InlineBody {
  // Exactly {kind, value}: a body with any other field is written whole.
  return body !== null && body.kind === 'inline' && body.value !== undefined && Object.keys(body).length === 2;
}

const TOOL_KEYS = 'role,callId,providerId,name,isError,content';
const ASSISTANT_KEYS = 'role,text,calls';
const CALL_KEYS = 'callId,providerId,name,args';

/** The fields of a plain settled call, exactly: started, then settled by a result of three fields. */
const SETTLED_KEYS = new Set(['callId', 'providerId', 'name', 'args', 'modelSeq', 'status', 'attempt', 'notAfter', 'result']);

interface CallsSeen {
  calls: RunState['calls'];
  answered: Map<string, Body | undefined>;
  /** Calls written in their message's tuple (encodeSnapshot leaves them out of the list). */
  settled: Set<string>;
}

function encodeMessage(m: LoggedMessage, asked: Map<string, LoggedCall>, seen: CallsSeen): EncodedMessage {
  if (m.role === 'tool') {
    if (isInline(m.content) && Object.keys(m).join() === TOOL_KEYS) return [TOOL, m.callId, m.providerId, m.name, m.isError, m.content.value];
    return m;
  }
  if (m.role === 'assistant') {
    for (const c of m.calls) asked.set(c.callId, c);
    const compact = Object.keys(m).join() === ASSISTANT_KEYS && m.calls.every((c) => isInline(c.args) && Object.keys(c).join() === CALL_KEYS);
    if (!compact) return m;
    const tuple: AssistantTuple = [ASSISTANT, m.text];
    for (const c of m.calls) {
      const asking: AskedEntry = [c.callId, c.providerId, c.name, (c.args as InlineBody).value];
      const call = seen.calls[c.callId];
      if (call && isPlainSettled(call, c, seen.answered.get(c.callId))) {
        seen.settled.add(c.callId);
        tuple.push([...asking, call.modelSeq, call.attempt, call.notAfter!, call.result!.ok, call.result!.source]);
      } else tuple.push(asking);
    }
    return tuple;
  }
  return m;
}

/**
 * The turn starting at messages[i] as one tuple, when it is a plain one: every call settled the
 * plain way and answered, once, by the tool messages right after it, in its calls' order.
 */
function encodeTurn(messages: readonly LoggedMessage[], i: number, asked: Map<string, LoggedCall>, seen: CallsSeen): TurnTuple | undefined {
  const m = messages[i]!;
  if (m.role !== 'assistant' || m.calls.length === 0 || Object.keys(m).join() !== ASSISTANT_KEYS) return undefined;
  const tuple: TurnTuple = [TURN, m.text];
  for (let k = 0; k < m.calls.length; k++) {
    const c = m.calls[k]!;
    const t = messages[i + 1 + k];
    const call = seen.calls[c.callId];
    if (!t || t.role !== 'tool' || t.callId !== c.callId || t.providerId !== c.providerId || t.name !== c.name) return undefined;
    if (!isInline(t.content) || Object.keys(t).join() !== TOOL_KEYS || seen.answered.get(c.callId) !== t.content) return undefined;
    if (!isInline(c.args) || Object.keys(c).join() !== CALL_KEYS || !call || !isPlainSettled(call, c, t.content)) return undefined;
    tuple.push([
      c.callId,
      c.providerId,
      c.name,
      c.args.value,
      call.modelSeq,
      call.attempt,
      call.notAfter!,
      call.result!.ok,
      call.result!.source,
      t.isError,
      t.content.value,
    ]);
  }
  for (const c of m.calls) {
    asked.set(c.callId, c);
    seen.settled.add(c.callId);
  }
  return tuple;
}

/** Whether `call` is exactly what its entry and its tool message imply (plainSettled rebuilds it). */
function isPlainSettled(call: CallState, asked: LoggedCall, answer: Body | undefined): boolean {
  const keys = Object.keys(call);
  if (keys.length !== SETTLED_KEYS.size || !keys.every((k) => SETTLED_KEYS.has(k))) return false;
  const { result } = call;
  return (
    call.status === 'done' &&
    call.providerId === asked.providerId &&
    call.name === asked.name &&
    call.args === asked.args &&
    typeof call.modelSeq === 'number' &&
    typeof call.attempt === 'number' &&
    typeof call.notAfter === 'number' &&
    result !== undefined &&
    answer !== undefined &&
    result.output === answer &&
    typeof result.ok === 'boolean' &&
    typeof result.source === 'string' &&
    // In any order: a call decoded apart has its output put back last.
    Object.keys(result).length === 3
  );
}

function encodeCall(call: CallState, asked: LoggedCall | undefined, answer: Body | undefined): EncodedCall {
  const sameId = asked !== undefined && asked.providerId === call.providerId && asked.name === call.name;
  const sameArgs = asked !== undefined && asked.args === call.args;
  const sameOutput = call.result !== undefined && answer !== undefined && answer === call.result.output;
  // Copied field by field, leaving out what the messages hold (deleting from a copy would turn
  // every call into a slow dictionary object, for the copy and for JSON.stringify).
  const out: Record<string, unknown> = {};
  for (const key in call) {
    if ((sameId && (key === 'providerId' || key === 'name')) || (sameArgs && key === 'args')) continue;
    if (key === 'result' && sameOutput) {
      const result: Record<string, unknown> = {};
      for (const k in call.result) if (k !== 'output') result[k] = (call.result as unknown as Record<string, unknown>)[k];
      out.result = result;
    } else out[key] = (call as unknown as Record<string, unknown>)[key];
  }
  const left = (sameId ? 'p' : '') + (sameArgs ? 'a' : '') + (sameOutput ? 'o' : '');
  if (left) out.s = left;
  return out as EncodedCall;
}

function decodeCompact(parsed: Encoded): RunState | undefined {
  if (!parsed.state || parsed.state.foldVersion !== FOLD_VERSION || !Array.isArray(parsed.messages) || !Array.isArray(parsed.calls)) return undefined;
  // One pass over the messages, building the calls as their messages name them (the order the
  // fold created them in). Only what is still to come is kept by id: the calls written apart
  // (few: the open ones and those of another shape) and settled calls whose tool message is ahead.
  const apart = new Map<string, ApartCall>();
  for (const encoded of parsed.calls) {
    if (typeof encoded?.callId !== 'string' || apart.has(encoded.callId)) return undefined;
    apart.set(encoded.callId, { encoded });
  }
  const pass: DecodePass = { calls: {}, apart, awaiting: new Map() };
  // A turn tuple is its assistant message and one tool message per entry.
  let count = 0;
  for (const e of parsed.messages) count += Array.isArray(e) && e[0] === TURN ? e.length - 1 : 1;
  const messages = new Array<LoggedMessage>(count);
  let at = 0;
  for (const e of parsed.messages) {
    if (Array.isArray(e) && e[0] === TURN) {
      if (!decodeTurn(e as TurnTuple, pass, messages, at)) return undefined;
      at += e.length - 1;
      continue;
    }
    const message = decodeMessage(e, pass);
    if (!message) return undefined;
    messages[at++] = message;
  }
  if (pass.awaiting.size > 0) return undefined; // a settled call whose tool message is gone
  const { calls } = pass;
  for (const [callId, seen] of apart) {
    const call = decodeCall(seen.encoded, seen.asked, seen.answer);
    if (!call) return undefined;
    // Named by a message: in the place held for it; named by none: after the rest.
    calls[callId] = call;
  }
  if (!Array.isArray(parsed.chars) || parsed.chars[0] !== messages.length || typeof parsed.chars[1] !== 'number') return undefined;
  rememberConversationChars(messages, parsed.chars[1]);
  return { ...parsed.state, messages, calls } as RunState;
}

interface ApartCall {
  encoded: EncodedCall;
  asked?: LoggedCall;
  answer?: Body;
}

interface DecodePass {
  /** The calls decoded so far, in their messages' order; a call written apart holds its place. */
  calls: Record<string, CallState>;
  apart: Map<string, ApartCall>;
  /** Settled calls written in their message's tuple whose tool message is still ahead. */
  awaiting: Map<string, CallState>;
}

function decodeMessage(e: EncodedMessage, pass: DecodePass): LoggedMessage | undefined {
  if (!Array.isArray(e)) {
    if (e.role === 'tool') answered(e.callId, e.content, pass);
    else if (e.role === 'assistant') for (const c of e.calls) asked(c, pass);
    return e;
  }
  if (e[0] === TOOL) {
    const [, callId, providerId, name, isError, value] = e as ToolTuple;
    const content: Body = { kind: 'inline', value };
    answered(callId, content, pass);
    return { role: 'tool', callId, providerId, name, isError, content };
  }
  if (e[0] !== ASSISTANT || e.length < 2) return undefined;
  // Sized up front: push would grow the array to 17 slots for its one call.
  const calls = new Array<LoggedCall>(e.length - 2);
  for (let i = 2; i < e.length; i++) {
    const entry = e[i] as AskedEntry | SettledEntry;
    if (!Array.isArray(entry) || (entry.length !== 4 && entry.length !== 9)) return undefined;
    const call: LoggedCall = { callId: entry[0], providerId: entry[1], name: entry[2], args: { kind: 'inline', value: entry[3] } };
    if (entry.length === 9) {
      if (!settled(entry, call, pass)) return undefined;
    } else asked(call, pass);
    calls[i - 2] = call;
  }
  return { role: 'assistant', text: e[1], calls };
}

function asked(call: LoggedCall, pass: DecodePass): void {
  const apart = pass.apart.get(call.callId);
  if (!apart) return;
  apart.asked = call;
  // Its place in the fold's order, filled when the calls written apart are decoded.
  pass.calls[call.callId] = undefined as unknown as CallState;
}

function answered(callId: string, content: Body, pass: DecodePass): void {
  const call = pass.awaiting.get(callId);
  if (call) {
    call.result!.output = content;
    pass.awaiting.delete(callId);
    return;
  }
  const apart = pass.apart.get(callId);
  if (apart) apart.answer = content;
}

/** A plain settled call from its message's entry (isPlainSettled's shape); its output comes with its tool message. */
function settled(entry: SettledEntry, asked: LoggedCall, pass: DecodePass): boolean {
  const call = plainSettled(entry, asked, undefined, pass);
  if (!call) return false;
  pass.awaiting.set(call.callId, call);
  return true;
}

/** A turn tuple's messages, written into `messages` from `at`, and its calls. */
function decodeTurn(e: TurnTuple, pass: DecodePass, messages: LoggedMessage[], at: number): boolean {
  if (e.length < 3) return false;
  const calls = new Array<LoggedCall>(e.length - 2);
  messages[at] = { role: 'assistant', text: e[1], calls };
  for (let k = 2; k < e.length; k++) {
    const entry = e[k] as TurnEntry;
    if (!Array.isArray(entry) || entry.length !== 11 || typeof entry[1] !== 'string' || typeof entry[2] !== 'string' || typeof entry[9] !== 'boolean')
      return false;
    const [callId, providerId, name, args, , , , , , isError, output] = entry;
    const call: LoggedCall = { callId, providerId, name, args: { kind: 'inline', value: args } };
    const content: Body = { kind: 'inline', value: output };
    if (!plainSettled(entry as unknown as SettledEntry, call, content, pass)) return false;
    calls[k - 2] = call;
    messages[at + k - 1] = { role: 'tool', callId, providerId, name, isError, content };
  }
  return true;
}

/** The call a settled entry describes (isPlainSettled's shape), placed in the fold's order. */
function plainSettled(entry: SettledEntry, asked: LoggedCall, output: Body | undefined, pass: DecodePass): CallState | undefined {
  const [callId, , , , modelSeq, attempt, notAfter, ok, source] = entry;
  if (typeof callId !== 'string' || pass.apart.has(callId) || callId in pass.calls) return undefined;
  if (typeof modelSeq !== 'number' || typeof attempt !== 'number' || typeof notAfter !== 'number' || typeof ok !== 'boolean' || typeof source !== 'string')
    return undefined;
  const call: CallState = {
    callId,
    providerId: asked.providerId,
    name: asked.name,
    args: asked.args,
    modelSeq,
    status: 'done',
    attempt,
    notAfter,
    // Without its output until its tool message comes (answered() puts it in).
    result: { ok, output: output as Body, source },
  };
  pass.calls[callId] = call;
  return call;
}

/** Fields decodeCall places itself; the rest are copied as written. */
const PLACED = new Set(['s', 'callId', 'providerId', 'name', 'args', 'result']);

function decodeCall(e: EncodedCall, asked: LoggedCall | undefined, answer: Body | undefined): CallState | undefined {
  const left = e.s ?? '';
  const fromMessage = left.includes('p');
  const argsFromMessage = left.includes('a');
  const outputFromMessage = left.includes('o');
  if ((fromMessage || argsFromMessage) && !asked) return undefined;
  // Built field by field, not by rest spreads: a long run decodes one per turn of its history.
  // The fold's field order first (callId, providerId, name, args), then the rest as written.
  const call = {
    callId: e.callId,
    providerId: fromMessage ? asked?.providerId : e.providerId,
    name: fromMessage ? asked?.name : e.name,
    args: argsFromMessage ? asked?.args : e.args,
  } as CallState;
  const fields = call as unknown as Record<string, unknown>;
  for (const key in e) if (!PLACED.has(key)) fields[key] = (e as unknown as Record<string, unknown>)[key];
  const result = e.result;
  if (result) {
    if (outputFromMessage) {
      if (!answer) return undefined;
      // The parsed object is this decode's own: the output goes back into it, not into a copy.
      (result as CallResult).output = answer;
    }
    call.result = result as CallResult;
  } else if (outputFromMessage) return undefined;
  // Every call has its args (and a result its output) again: the state the fold had.
  if (!call.args || typeof call.providerId !== 'string' || typeof call.name !== 'string' || (call.result && !call.result.output)) return undefined;
  return call;
}
