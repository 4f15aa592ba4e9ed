import type { ModelMessage } from '../core/messages.js';

/**
 * The tool-call ids to send on the wire for one request.
 *
 * The provider's own id goes back unchanged whenever it is unique in the request. Servers such as
 * vLLM and Ollama restart their ids every turn (`call_0`, `call_1`, ...), so the same provider id
 * can name calls of several turns; a request with duplicate ids pairs results with the wrong call
 * or is rejected. Rule, deterministic from the log alone: the first call (in conversation order)
 * with a given provider id keeps it; every later one, and any call with an empty id, becomes
 * `<providerId or "call">_<callId>` (callId is `<seq>-<index>`, unique in the run), extended with
 * `_` in the unlikely case that collides with an id already in the request. Earlier calls never
 * change id as the conversation grows, so a provider's prompt cache prefix stays stable.
 * The result only uses `[A-Za-z0-9_-]` beyond the provider's own characters (Bedrock's rule).
 */
export type WireIds = (callId: string, providerId: string) => string;

/** Returns the wire id of the call (or of the tool result) with this Logbook callId. */
export function assignWireIds(messages: readonly ModelMessage[]): WireIds {
  const providerIds = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.calls) if (c.providerId) providerIds.add(c.providerId);
  }
  const taken = new Set<string>();
  const byCallId = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const c of m.calls) {
      if (byCallId.has(c.callId)) continue;
      let id = c.providerId;
      if (!id || taken.has(id)) {
        id = `${c.providerId || 'call'}_${c.callId}`;
        while (taken.has(id) || providerIds.has(id)) id += '_';
      }
      taken.add(id);
      byCallId.set(c.callId, id);
    }
  }
  // A result whose call is not in the request (should not happen) keeps what it has.
  return (callId, providerId) => byCallId.get(callId) ?? (providerId || `call_${callId}`);
}
