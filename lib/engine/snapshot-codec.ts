import type { Body } from '../core/body.js';
import { FOLD_VERSION, type CallResult, type CallState, type RunState } from '../core/state.js';

/**
 * The bytes of a snapshot. A folded state holds every call's arguments and result twice: in
 * `calls` and in the messages the model sees (the fold puts the same body object in both). The
 * encoding writes each once: a call whose body is the very object its message holds is written
 * without it and listed in `shared`, and decoding puts the message's body back (the same object
 * again, as the fold had it). A cold step downloads, hashes and parses fewer bytes: a third fewer
 * with 400-byte tool results, more with larger ones (test/unit/engine/snapshot-codec.test.ts). A body that is not shared (edited in one place only) is written where it is.
 *
 * Snapshots written before this encoding (the bare state) still decode; anything that does not
 * restore exactly is rejected, and the loader falls back to a full replay.
 */
const ENCODING = 2;

/** A call as written: without the bodies its messages hold. */
type EncodedCall = Omit<CallState, 'args' | 'result'> & { args?: Body; result?: Omit<CallResult, 'output'> & { output?: Body } };

interface Encoded {
  encoding: typeof ENCODING;
  /** callId → what the call left out: `a` its args, `o` its result's output, `ao` both. */
  shared: Record<string, string>;
  state: Omit<RunState, 'calls'> & { calls: Record<string, EncodedCall> };
}

export function encodeSnapshot(state: RunState): Uint8Array {
  const { args, outputs } = messageBodies(state);
  const calls: Record<string, EncodedCall> = {};
  const shared: Record<string, string> = {};
  for (const [id, call] of Object.entries(state.calls)) {
    const out: EncodedCall = { ...call };
    let left = '';
    if (args.get(id) === call.args) {
      delete out.args;
      left += 'a';
    }
    if (call.result && outputs.get(id) === call.result.output) {
      const result: EncodedCall['result'] = { ...call.result };
      delete result.output;
      out.result = result;
      left += 'o';
    }
    calls[id] = out;
    if (left) shared[id] = left;
  }
  const encoded: Encoded = { encoding: ENCODING, shared, state: { ...state, calls } };
  return new TextEncoder().encode(JSON.stringify(encoded));
}

/** The state in `bytes`, or undefined when they are not a snapshot of this fold version. */
export function decodeSnapshot(bytes: Uint8Array): RunState | undefined {
  const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Partial<Encoded> & Partial<RunState>;
  if (parsed.encoding === undefined) return parsed.foldVersion === FOLD_VERSION ? (parsed as RunState) : undefined;
  if (parsed.encoding !== ENCODING || !parsed.state || parsed.state.foldVersion !== FOLD_VERSION) return undefined;
  const { state } = parsed;
  const { args, outputs } = messageBodies(state);
  for (const [id, left] of Object.entries(parsed.shared ?? {})) {
    const call = state.calls[id];
    if (!call) return undefined;
    if (left.includes('a')) {
      const body = args.get(id);
      if (!body) return undefined;
      call.args = body;
    }
    if (left.includes('o')) {
      const body = outputs.get(id);
      if (!body || !call.result) return undefined;
      call.result.output = body;
    }
  }
  // Every call has its args (and a result its output) again: the state the fold had.
  for (const call of Object.values(state.calls)) if (!call.args || (call.result && !call.result.output)) return undefined;
  return state as RunState;
}

/** Each call's args as its assistant message holds them, and its output as its tool message does. */
function messageBodies(state: Pick<RunState, 'messages'>): { args: Map<string, Body>; outputs: Map<string, Body> } {
  const args = new Map<string, Body>();
  const outputs = new Map<string, Body>();
  for (const m of state.messages) {
    if (m.role === 'assistant') for (const c of m.calls) args.set(c.callId, c.args);
    else if (m.role === 'tool') outputs.set(m.callId, m.content);
  }
  return { args, outputs };
}
