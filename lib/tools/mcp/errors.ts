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
