import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonValue } from '../../core/json.js';
import { McpToolError } from './errors.js';

/**
 * A `tools/call` result as a Logbook tool output, which the codec then redacts and, when large,
 * offloads to the blob store like any other:
 * - `isError: true` → McpToolError, so the run records an error result the model sees;
 * - structured content → that object (its text twin, which the spec asks servers to add, is the
 *   same data and would only double the tokens);
 * - only text blocks → their text, joined by newlines;
 * - anything else (images, audio, resources, links) → `{ content: [...] }`, blocks as sent.
 */
export function toolOutput(result: CallToolResult, server: string, tool: string): JsonValue {
  const blocks = (result.content ?? []).map(({ _meta: _dropped, ...block }) => block);
  if (result.isError === true) {
    throw new McpToolError(server, tool, errorText(blocks, result.structuredContent) || `${tool} reported an error`);
  }
  if (result.structuredContent !== undefined) return result.structuredContent as JsonValue;
  if (blocks.every((b) => b.type === 'text')) return blocks.map((b) => (b as { text: string }).text).join('\n');
  return { content: blocks as JsonValue[] };
}

function errorText(blocks: { type: string }[], structured: Record<string, unknown> | undefined): string {
  const texts = blocks.filter((b): b is { type: 'text'; text: string } => b.type === 'text').map((b) => b.text);
  if (texts.length > 0) return texts.join('\n');
  return structured !== undefined ? JSON.stringify(structured) : '';
}
