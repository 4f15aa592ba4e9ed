import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, ToolOutcomeUnknownError } from '../../core/errors.js';
import { McpConnectionClosedError, McpRequestError, McpResultTooLargeError, McpServerUnavailableError } from './errors.js';
import { classifyCallFailure, isStreamBreak } from './failures.js';
import { isHttpTransport, type McpTransport } from './options.js';
import { cappedFetch, CappedLineBuffer, tooLargeOf } from './result-cap.js';

export interface ConnectionOptions {
  transport: McpTransport;
  /** Names the server in errors: `stdio:<command>` or the URL without credentials or query. */
  label: string;
  connectTimeoutMs: number;
  clientInfo: { name: string; version: string };
  /** Largest message taken from the server (result-cap.ts). */
  maxResultBytes: number;
}

/** A listing that never ends is a broken server, not a reason to hang a cold start. */
const MAX_LIST_PAGES = 100;

/**
 * One MCP client per server per process (warm container), made on first use and kept. It is
 * made again only after it closed (the server went away, or a call found it gone), and every
 * failure of a call is turned into what it means for the call: not sent, refused, or unknown.
 */
export class McpConnection {
  private live: Promise<Client> | undefined;
  private current: Client | undefined;
  private inFlight = 0;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Connections made so far (what "once per warm container" is measured by). */
  connects = 0;

  constructor(private readonly options: ConnectionOptions) {}

  get label(): string {
    return this.options.label;
  }

  /** The server's name and version from `initialize`, once connected. */
  serverInfo(): { name: string; version: string } | undefined {
    return this.current?.getServerVersion();
  }

  async listTools(): Promise<Tool[]> {
    const client = await this.connected();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.options.connectTimeoutMs });
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined) return tools;
      }
    } catch (error) {
      throw new McpServerUnavailableError(this.label, `listing its tools failed: ${errorMessage(error)}`, { cause: error });
    }
    throw new McpServerUnavailableError(this.label, `its tool list did not end after ${MAX_LIST_PAGES} pages`);
  }

  /**
   * One `tools/call`. A request that provably never reached the server is sent once more on a
   * fresh connection (a restarted server, an expired HTTP session); after that the server is
   * unavailable. Everything else that is not a result says the tool may have run.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<CallToolResult> {
    // A reconnect must fail before the call's own timeout does: refused in time is an error
    // result, while the engine's timeout would leave an unsent call "unknown".
    const connectTimeoutMs = Math.max(1, Math.min(this.options.connectTimeoutMs, Math.floor(options.timeoutMs / 2)));
    for (let sent = 0; ; sent++) {
      const client = await this.connected(connectTimeoutMs);
      this.inFlight++;
      try {
        return await client.request({ method: 'tools/call', params: { name, arguments: args, _meta: meta } }, CallToolResultSchema, {
          timeout: options.timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (error) {
        // Aborted by the engine (timeout, cancel, lost lease): it decides what that means.
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        // It ran and answered, too much: an error result, never a reason to run it again.
        if (tooLargeOf(error)) throw new McpResultTooLargeError(this.label, name, this.options.maxResultBytes);
        const failure = classifyCallFailure(error);
        if (failure === 'not_sent') {
          this.forget(client);
          if (sent === 0) continue;
          throw new McpServerUnavailableError(this.label, errorMessage(error), { cause: error });
        }
        if (failure === 'refused') throw new McpRequestError(this.label, name, errorMessage(error), { cause: error });
        throw new ToolOutcomeUnknownError(`MCP server ${this.label}: ${name} may or may not have run (${errorMessage(error)})`, { cause: error });
      } finally {
        this.inFlight--;
      }
    }
  }

  /**
   * Close for good: the HTTP session or the stdio child (the SDK ends its stdin, then SIGTERM,
   * then SIGKILL). Idempotent: every call returns the same promise. Calls in flight end as unknown
   * (they were sent); later calls fail with McpConnectionClosedError and are never sent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.closed = true;
    const opening = this.live;
    const client = this.current;
    this.current = undefined;
    this.live = undefined;
    const pid = client?.transport instanceof StdioClientTransport ? client.transport.pid : null;
    await client?.close().catch(() => undefined);
    // The SDK sends SIGKILL last and does not wait for it to land: closed means gone.
    if (pid !== null) await exited(pid);
    // A connect under way when close() came: open() sees `closed` and closes what it made.
    await opening?.catch(() => undefined);
  }

  private connected(timeoutMs = this.options.connectTimeoutMs): Promise<Client> {
    if (this.closed) return Promise.reject(new McpConnectionClosedError(this.label));
    if (!this.live) {
      const attempt = this.open(timeoutMs);
      this.live = attempt;
      attempt.catch(() => {
        if (this.live === attempt) this.live = undefined;
      });
    }
    return this.live;
  }

  private async open(timeoutMs: number): Promise<Client> {
    const client = new Client(this.options.clientInfo, { capabilities: {} });
    client.onclose = () => this.forget(client);
    client.onerror = (error) => {
      // A broken response stream leaves its calls waiting for a reply that cannot come.
      if (this.inFlight > 0 && isStreamBreak(error)) void client.close().catch(() => undefined);
    };
    try {
      await client.connect(this.transport(), { timeout: timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new McpServerUnavailableError(this.label, errorMessage(error), { cause: error });
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new McpConnectionClosedError(this.label);
    }
    this.current = client;
    this.connects++;
    return client;
  }

  /** Drop a client that is gone (or found gone), so the next call connects again. */
  private forget(client: Client): void {
    if (this.current !== client) return;
    this.current = undefined;
    this.live = undefined;
    void client.close().catch(() => undefined);
  }

  private transport(): Transport {
    const t = this.options.transport;
    const max = this.options.maxResultBytes;
    if (isHttpTransport(t))
      return new StreamableHTTPClientTransport(new URL(String(t.url)), { requestInit: { headers: { ...t.headers } }, fetch: cappedFetch(max) });
    const stdio = new StdioClientTransport({
      command: t.command,
      args: [...(t.args ?? [])],
      ...(t.env ? { env: t.env } : {}),
      ...(t.cwd ? { cwd: t.cwd } : {}),
      stderr: t.stderr ?? 'inherit',
      // The SDK's own bound closes the connection (calls in flight end unknown): the backstop if
      // the buffer below could not be put in place.
      maxBufferSize: max + 64 * 1024,
    });
    // The SDK offers no hook for its line buffer: swap it for one that drops an oversized line as
    // it arrives and answers its request with an error (test/unit/tools/mcp-result-cap.test.ts
    // fails if this field is renamed in an SDK upgrade).
    const internal = stdio as unknown as { _readBuffer?: { append?: unknown; readMessage?: unknown } };
    if (typeof internal._readBuffer?.append === 'function' && typeof internal._readBuffer.readMessage === 'function') {
      (internal as { _readBuffer: unknown })._readBuffer = new CappedLineBuffer(max);
    }
    return stdio;
  }
}

/** Resolves once process `pid` no longer exists (at most about a second after a SIGKILL). */
async function exited(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
