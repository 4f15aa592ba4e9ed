import { LogbookError } from '../../core/errors.js';

/**
 * The MCP server could not be reached, so the request never left: listing fails the cold start
 * (the next invocation tries again); a call gets an error result the model sees. A call that may
 * have reached the server is never reported this way: its outcome is unknown and its policy decides.
 */
export class McpServerUnavailableError extends LogbookError {
  readonly code = 'mcp_server_unavailable';
  override readonly retryable = true;
  constructor(
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`MCP server ${server} is unavailable: ${message}`, options);
  }
}

/** The tool ran and reported failure (`isError: true` in its result). */
export class McpToolError extends LogbookError {
  readonly code = 'mcp_tool_error';
  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The server answered the request with an error instead of a result (a JSON-RPC error such as
 * invalid params or unknown tool, or an HTTP 4xx refusing the request).
 */
export class McpRequestError extends LogbookError {
  readonly code = 'mcp_request_failed';
  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`MCP server ${server} refused ${tool}: ${message}`, options);
  }
}

/**
 * The tool ran and answered with more than `maxResultBytes`: the answer was dropped as it
 * arrived and the model gets this error result instead (ask for less: a page, a filter).
 */
export class McpResultTooLargeError extends LogbookError {
  readonly code = 'mcp_result_too_large';
  constructor(
    readonly server: string,
    readonly tool: string,
    readonly limitBytes: number,
  ) {
    super(`MCP server ${server}: the result of ${tool} was larger than ${limitBytes} bytes and was dropped; ask for less (a narrower query, a page)`);
  }
}

/**
 * The application closed the connection (McpServerTools.close()): a call after that is refused
 * here and never sent. Connect again (connectMcpServer) to use the server again.
 */
export class McpConnectionClosedError extends LogbookError {
  readonly code = 'mcp_connection_closed';
  constructor(readonly server: string) {
    super(`MCP server ${server}: the connection was closed by the application; the call was not sent`);
  }
}
