import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * What a failed `tools/call` tells us about the tool having run:
 * - `not_sent`: the request provably never reached the server (no connection, connection
 *   refused, an HTTP session the server no longer knows): safe to reconnect and send it again;
 * - `refused`: the server answered with an error instead of running the tool (JSON-RPC error,
 *   HTTP 4xx): an error result;
 * - `unknown`: it may have run (connection lost after sending, timeout, HTTP 5xx, a reply we
 *   cannot read): no result; the call's policy decides.
 * When in doubt the answer is `unknown`: a wrong "not sent" could repeat a side effect.
 */
export type CallFailure = 'not_sent' | 'refused' | 'unknown';

/** Errors of a connection that was never made, so nothing was written to it. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export function classifyCallFailure(error: unknown): CallFailure {
  if (error instanceof McpError) {
    // These two the SDK raises locally, after the request went out.
    if (error.code === ErrorCode.ConnectionClosed || error.code === ErrorCode.RequestTimeout) return 'unknown';
    return 'refused';
  }
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? -1;
    if (status === 404) return 'not_sent'; // the session is gone: the server did not look at the request
    if (status >= 400 && status < 500) return 'refused';
    return 'unknown';
  }
  if (error instanceof Error && error.message === 'Not connected') return 'not_sent';
  return networkCodes(error).some((c) => NOT_CONNECTED.has(c)) ? 'not_sent' : 'unknown';
}

/** Codes along an error's cause chain (fetch wraps them: TypeError('fetch failed', { cause })). */
function networkCodes(error: unknown, depth = 0): string[] {
  if (depth > 4 || typeof error !== 'object' || error === null) return [];
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => networkCodes(x, depth + 1)) : [];
  return [...own, ...nested, ...networkCodes(e.cause, depth + 1)];
}

/**
 * The SDK reports a broken SSE response stream only through `onerror` and then waits for a reply
 * that cannot come. Seeing one is our cue to close the connection, which settles every pending
 * call as `unknown` at once instead of at its timeout.
 */
export function isStreamBreak(error: unknown): boolean {
  return error instanceof Error && /SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts/.test(error.message);
}
