import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../../lib/core/errors.js';
import { McpConnection } from '../../../lib/tools/mcp/connection.js';
import { McpServerUnavailableError, McpToolError } from '../../../lib/tools/mcp/errors.js';
import { classifyCallFailure, isStreamBreak } from '../../../lib/tools/mcp/failures.js';
import { mcpTools } from '../../../lib/tools/mcp/mcp-tools.js';
import { logbookToolNames } from '../../../lib/tools/mcp/names.js';
import { checkOptions, describeTransport } from '../../../lib/tools/mcp/options.js';
import { contradictoryHints, mayDestroy, policyFor } from '../../../lib/tools/mcp/policy.js';
import { toolOutput } from '../../../lib/tools/mcp/result.js';

describe('policies from MCP annotations', () => {
  const tool = (annotations?: Record<string, boolean>) => ({ name: 't', ...(annotations ? { annotations } : {}) });

  it('trusted: readOnlyHint → rerun, idempotentHint → idempotency_key, anything else → escalate', () => {
    expect(policyFor(tool({ readOnlyHint: true }), undefined, true).policy).toBe('rerun');
    expect(policyFor(tool({ readOnlyHint: true, destructiveHint: false }), undefined, true).policy).toBe('rerun');
    // idempotentHint only means something for a tool that writes; read-only wins.
    expect(policyFor(tool({ readOnlyHint: true, idempotentHint: true }), undefined, true).policy).toBe('rerun');
    expect(policyFor(tool({ idempotentHint: true }), undefined, true).policy).toBe('idempotency_key');
    expect(policyFor(tool({ readOnlyHint: false, idempotentHint: true, destructiveHint: false }), undefined, true).policy).toBe('idempotency_key');
    expect(policyFor(tool({ destructiveHint: false }), undefined, true).policy).toBe('escalate');
    expect(policyFor(tool({ openWorldHint: true }), undefined, true).policy).toBe('escalate');
    expect(policyFor(tool({ readOnlyHint: false }), undefined, true).policy).toBe('escalate');
    expect(policyFor(tool(), undefined, true).policy).toBe('escalate');
  });

  it('destructiveHint: true escalates whatever else is claimed, and so do hints that contradict each other', () => {
    const cases: [Record<string, boolean>, string][] = [
      [{ destructiveHint: true }, 'destructive'],
      [{ readOnlyHint: true, destructiveHint: true }, 'read-only and destructive'],
      [{ readOnlyHint: false, idempotentHint: true, destructiveHint: true }, 'idempotent and destructive'],
      [{ readOnlyHint: true, idempotentHint: true, destructiveHint: true }, 'read-only, idempotent and destructive'],
      [{ readOnlyHint: true, idempotentHint: false }, 'read-only yet repeating it has an effect'],
    ];
    for (const [hints, what] of cases) expect([what, policyFor(tool(hints), undefined, true).policy]).toEqual([what, 'escalate']);
    expect(contradictoryHints({ readOnlyHint: true, destructiveHint: true })).toBe(true);
    expect(contradictoryHints({ readOnlyHint: true, idempotentHint: false })).toBe(true);
    expect(contradictoryHints({ readOnlyHint: 'yes' } as never)).toBe(true);
    expect(contradictoryHints({ readOnlyHint: true, idempotentHint: true, destructiveHint: false })).toBe(false);
    expect(contradictoryHints({ readOnlyHint: false, idempotentHint: true, destructiveHint: true })).toBe(false);
  });

  it('may destroy (for approval): as the MCP spec defaults, unless a consistent read-only or destructiveHint: false says otherwise', () => {
    expect(mayDestroy(tool())).toBe(true);
    expect(mayDestroy(tool({ idempotentHint: true }))).toBe(true);
    expect(mayDestroy(tool({ readOnlyHint: false }))).toBe(true);
    expect(mayDestroy(tool({ readOnlyHint: true, destructiveHint: true }))).toBe(true);
    expect(mayDestroy(tool({ readOnlyHint: true, idempotentHint: false }))).toBe(true);
    expect(mayDestroy(tool({ readOnlyHint: true }))).toBe(false);
    expect(mayDestroy(tool({ destructiveHint: false }))).toBe(false);
  });

  it('the agent overrides them, with its own timeout or a verify(); untrusted annotations are ignored', () => {
    expect(policyFor(tool({ readOnlyHint: true }), 'escalate', true)).toEqual({ policy: 'escalate' });
    expect(policyFor(tool(), { policy: 'idempotency_key', timeoutMs: 5_000 }, true)).toEqual({ policy: 'idempotency_key', timeoutMs: 5_000 });
    const verify = async () => ({ status: 'not_landed' as const });
    expect(policyFor(tool(), { policy: 'verify', verify }, true)).toEqual({ policy: 'verify', verify });
    expect(policyFor(tool({ readOnlyHint: true }), undefined, false).policy).toBe('escalate');
    expect(policyFor(tool({ readOnlyHint: true }), 'rerun', false).policy).toBe('rerun');
  });
});

describe('tool names', () => {
  it('prefix + MCP name, with characters Logbook does not allow turned into _', () => {
    expect([...logbookToolNames(['search', 'repo.get', 'a/b-c'], 'gh_', 's')]).toEqual([
      ['search', 'gh_search'],
      ['repo.get', 'gh_repo_get'],
      ['a/b-c', 'gh_a_b-c'],
    ]);
  });

  it('a clash or a name that stays invalid is a ConfigError that says what to do', () => {
    expect(() => logbookToolNames(['a.b', 'a_b'], '', 's')).toThrow(/"a.b" and "a_b" both become "a_b": leave one out with `include`/);
    expect(() => logbookToolNames(['9lives'], '', 's')).toThrow(ConfigError);
    expect(() => logbookToolNames(['x'.repeat(70)], '', 's')).toThrow(/does not match/);
    expect(logbookToolNames(['9lives'], 'cat_', 's').get('9lives')).toBe('cat_9lives');
  });
});

describe('results', () => {
  it('text → its text; structured content → the object; other blocks → { content }', () => {
    expect(toolOutput({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, 's', 't')).toBe('a\nb');
    expect(toolOutput({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } }, 's', 't')).toEqual({ n: 1 });
    expect(toolOutput({ content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png', _meta: { x: 1 } }] }, 's', 't')).toEqual({
      content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }],
    });
    expect(toolOutput({ content: [] }, 's', 't')).toBe('');
  });

  it('isError → McpToolError carrying the text (or the structured content) for the model', () => {
    expect(() => toolOutput({ isError: true, content: [{ type: 'text', text: 'rate limited' }] }, 's', 't')).toThrow(McpToolError);
    expect(() => toolOutput({ isError: true, content: [{ type: 'text', text: 'rate limited' }] }, 's', 't')).toThrow('rate limited');
    expect(() => toolOutput({ isError: true, content: [], structuredContent: { code: 42 } }, 's', 't')).toThrow('{"code":42}');
    expect(() => toolOutput({ isError: true, content: [] }, 's', 't')).toThrow('t reported an error');
  });
});

describe('what a failed call says about the tool having run', () => {
  const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });

  it('not sent: no connection, connection refused, an HTTP session the server forgot', () => {
    expect(classifyCallFailure(new Error('Not connected'))).toBe('not_sent');
    expect(classifyCallFailure(fetchFailed('ECONNREFUSED'))).toBe('not_sent');
    expect(classifyCallFailure(new TypeError('fetch failed', { cause: new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]) }))).toBe('not_sent');
    expect(classifyCallFailure(fetchFailed('ENOTFOUND'))).toBe('not_sent');
    expect(classifyCallFailure(new StreamableHTTPError(404, 'Session not found'))).toBe('not_sent');
  });

  it('refused: the server answered with an error (JSON-RPC error, HTTP 4xx)', () => {
    expect(classifyCallFailure(new McpError(ErrorCode.InvalidParams, 'bad'))).toBe('refused');
    expect(classifyCallFailure(new McpError(ErrorCode.MethodNotFound, 'no such tool'))).toBe('refused');
    expect(classifyCallFailure(new McpError(ErrorCode.InternalError, 'boom'))).toBe('refused');
    expect(classifyCallFailure(new StreamableHTTPError(401, 'unauthorized'))).toBe('refused');
  });

  it('unknown: lost after sending, timed out, 5xx, a reply we cannot read, anything else', () => {
    expect(classifyCallFailure(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toBe('unknown');
    expect(classifyCallFailure(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toBe('unknown');
    expect(classifyCallFailure(new StreamableHTTPError(502, 'bad gateway'))).toBe('unknown');
    expect(classifyCallFailure(new StreamableHTTPError(-1, 'Unexpected content type'))).toBe('unknown');
    expect(classifyCallFailure(fetchFailed('ECONNRESET'))).toBe('unknown');
    expect(classifyCallFailure(fetchFailed('UND_ERR_SOCKET'))).toBe('unknown');
    expect(classifyCallFailure(z.object({ content: z.array(z.string()) }).safeParse({ content: 1 }).error)).toBe('unknown');
    expect(classifyCallFailure('weird')).toBe('unknown');
  });

  it('a broken SSE stream is recognised from the SDK error it reports', () => {
    expect(isStreamBreak(new Error('SSE stream disconnected: TypeError: terminated'))).toBe(true);
    expect(isStreamBreak(new Error('Failed to open SSE stream: Not Found'))).toBe(false);
  });
});

describe('options', () => {
  it('a mistake is a ConfigError before anything connects', async () => {
    await expect(mcpTools({ transport: {} as never })).rejects.toThrow(/transport must be \{ url \}/);
    await expect(mcpTools({ transport: { url: 'ftp://x' } })).rejects.toThrow(/must be http/);
    await expect(mcpTools({ transport: { url: 'http://x', command: 'node' } as never })).rejects.toThrow(/not both/);
    await expect(mcpTools({ transport: { command: 'node' }, prefix: '1x' })).rejects.toThrow(/prefix/);
    await expect(mcpTools({ transport: { command: 'node' }, policies: { a: 'maybe' as never } })).rejects.toThrow(/policies.a must be one of/);
    await expect(mcpTools({ transport: { command: 'node' }, policies: { a: { policy: 'verify' } as never } })).rejects.toThrow(/no verify\(\)/);
    await expect(mcpTools({ transport: { command: 'node' }, timeoutMs: -1 })).rejects.toThrow(ConfigError);
    expect(() => checkOptions({ transport: { command: 'node', args: ['s.js'] }, prefix: 'gh_', policies: { a: 'rerun' } })).not.toThrow();
  });

  it('labels a server without its credentials', () => {
    expect(describeTransport({ url: 'https://user:secret@mcp.example.com/v1/mcp?token=abc' })).toBe('https://mcp.example.com/v1/mcp');
    expect(describeTransport({ command: 'npx', args: ['-y', 'server', '--token', 'abc'] })).toBe('stdio:npx');
  });

  it('a server that cannot be reached at cold start is McpServerUnavailableError, with no partial tools', async () => {
    await expect(mcpTools({ transport: { url: 'http://127.0.0.1:9/mcp' }, connectTimeoutMs: 2_000 })).rejects.toMatchObject({ code: 'mcp_server_unavailable' });
    await expect(mcpTools({ transport: { command: '/nonexistent/mcp-server' }, connectTimeoutMs: 2_000 })).rejects.toMatchObject({ code: 'mcp_server_unavailable' });
  });
});

describe('connections', () => {
  it('a reconnect during a call gives up within half the call timeout: a server that accepts and never answers is unavailable, not a hung call', async () => {
    // Accepts TCP connections and never writes a byte.
    const sockets: Socket[] = [];
    const blackHole = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const { port } = blackHole.address() as { port: number };
    // A connect bound far beyond the test's own timeout: only the call's bound can end it in time.
    const connection = new McpConnection({ transport: { url: `http://127.0.0.1:${port}/mcp` }, label: 'black-hole', connectTimeoutMs: 200_000, clientInfo: { name: 't', version: '1' }, maxResultBytes: 1024 });
    try {
      await expect(connection.callTool('anything', {}, {}, { timeoutMs: 1_000 })).rejects.toBeInstanceOf(McpServerUnavailableError);
      expect(connection.connects).toBe(0);
    } finally {
      await connection.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });
});
