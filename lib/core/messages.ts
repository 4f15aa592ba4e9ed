import type { AttachmentKind, AttachmentMediaType } from './attachments.js';
import type { Body } from './body.js';
import type { JsonValue } from './json.js';
import type { ModelSettings } from './model-settings.js';

/**
 * The provider-neutral conversation as the log holds it. Adapters map it to and from each
 * provider's wire format; the log never depends on one SDK's types.
 */
export type LoggedMessage =
  | { role: 'user'; content: Body }
  | { role: 'assistant'; text: Body | null; calls: LoggedCall[] }
  | { role: 'tool'; callId: string; providerId: string; name: string; isError: boolean; content: Body };

export interface LoggedCall {
  /** `<seq of the model_response>-<index>`: unique in the run whatever the provider does. */
  callId: string;
  /** The provider's own id (vLLM and Ollama repeat `call_0`); it is what goes back on the wire. */
  providerId: string;
  name: string;
  args: Body;
}

/** Messages with every body resolved: what a ModelClient receives. */
export type ModelMessage =
  | { role: 'user'; content: string; attachments?: readonly ModelAttachment[] }
  | { role: 'assistant'; text: string; calls: ModelCall[] }
  | { role: 'tool'; callId: string; providerId: string; name: string; isError: boolean; content: string };

/**
 * An image or document of a user message (core/attachments.ts): the reference the log holds, with
 * the bytes the engine fetched from the blob store (sha256-checked) when it built the request.
 * Adapters map it to their wire: Bedrock image/document blocks, OpenAI image_url and file parts,
 * AI SDK file parts.
 */
export interface ModelAttachment {
  kind: AttachmentKind;
  mediaType: AttachmentMediaType;
  sha256: string;
  /** The name it was uploaded with, if any. */
  name?: string;
  /** The bytes, base64: a string, so the frozen request cannot be written into. */
  data: string;
}

export interface ModelCall {
  callId: string;
  providerId: string;
  name: string;
  args: JsonValue;
}

export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the tool's input, as pinned in run_started. */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  modelId: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  /** Always set: the engine reserved budget for exactly this many output tokens. */
  maxOutputTokens: number;
  /** The agent's pinned sampling settings; adapters map each one to their wire (absent: none set). */
  settings?: ModelSettings;
  /**
   * Set when a context policy is pinned: the model responses the whole conversation holds, those
   * the policy left out of `messages` included (a scripted model picks its reply by it).
   */
  turns?: number;
  /** `summary`: not a turn of the conversation but the context policy's summary call. */
  purpose?: 'summary';
  /**
   * Set when the agent has an output schema: the final answer must be JSON that fits `schema`
   * (JSON Schema draft 2020-12, as pinned in run_started). Providers map it to their JSON-schema
   * response format; a client that cannot is still checked, and repaired, by the engine.
   */
  output?: ModelOutputSpec;
}

export interface ModelOutputSpec {
  /** A name for the format, where the provider wants one (`final_answer`). */
  name: string;
  schema: Record<string, unknown>;
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'content_filter' | 'other';

export interface ModelResponseCall {
  providerId: string;
  name: string;
  /** Parsed arguments, or the raw text when the provider sent JSON that does not parse. */
  args: JsonValue;
  argsError?: string;
}

export interface ModelResponse {
  text: string;
  calls: ModelResponseCall[];
  usage: ModelUsage;
  stopReason: StopReason;
}
