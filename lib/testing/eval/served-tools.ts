import { canonicalJson, type JsonValue } from '../../core/json.js';
import type { ToolContext, ToolDefinition } from '../../authoring/types.js';
import type { EvalToolCall } from './eval-side.js';
import { NotExecutedUnderEvalError, RecordedToolError } from './eval-errors.js';

/** A tool and its arguments as one string: the name, then the arguments' canonical JSON (keys sorted). */
export function callKey(name: string, args: JsonValue): string {
  return `${name}\u0000${canonicalJson(args)}`;
}

/**
 * The recorded run's tool results, to serve the candidate's calls from. A call is answered by a
 * recorded call of the same tool with the same arguments (canonical JSON, so key order does not
 * matter), and each recorded call answers once: repeated identical calls are matched in order
 * (the candidate's first `search(x)` gets the recorded first `search(x)`'s result, its second the
 * second's, a third none). Only recorded calls that got a result can answer; a call recorded
 * with arguments that were not JSON never matches.
 */
export class RecordedResults {
  private readonly pools = new Map<string, EvalToolCall[]>();

  constructor(calls: readonly EvalToolCall[]) {
    for (const call of calls) {
      if (call.args === undefined || !call.result) continue;
      const key = callKey(call.name, call.args);
      const pool = this.pools.get(key) ?? [];
      pool.push(call);
      this.pools.set(key, pool);
    }
  }

  /** The next unused recorded call of this tool with these arguments, or undefined. */
  take(name: string, args: JsonValue): EvalToolCall | undefined {
    return this.pools.get(callKey(name, args))?.shift();
  }
}

/** What became of one candidate call: served from the log, not executed, or executed (an opted-in read-only tool). */
export interface ServedCall {
  callId: string;
  tool: string;
  args: JsonValue;
  outcome: 'served' | 'not_executed' | 'executed';
  /** The recorded call whose result was served. */
  recordedCallId?: string;
}

export interface ServingOptions {
  results: RecordedResults;
  /** The arguments the candidate's model asked for, as its log holds them (redacted, like the recorded ones). */
  askedArgs(ctx: ToolContext): Promise<JsonValue>;
  /** Execute a `rerun`-policy tool (read-only by its declaration) the log cannot answer. Default false. */
  allowReadOnly?: boolean;
  /** Each call, as it is answered. */
  onCall(call: ServedCall): void;
}

/** A `rerun` tool with no approval and no wait: the only kind an eval may run, and only when opted in. */
export function isReadOnly(tool: ToolDefinition): boolean {
  return tool.policy === 'rerun' && tool.approval === undefined && tool.wait === undefined;
}

/**
 * The candidate's tools as an eval runs them: same name, description and input schema (so the
 * model sees the same tools and the engine validates arguments the same way), but `execute`
 * answers from the recorded run and never performs the tool's side effect. No approval (nothing
 * runs that a person would approve: a recorded rejection is served as the error result it
 * produced), no wait (a recorded signal, timer or child run's result is served like any other),
 * policy `rerun` (serving is read-only). A call the log cannot answer gets a
 * NotExecutedUnderEvalError result and the run goes on; with `allowReadOnly`, a read-only tool is
 * executed instead.
 */
export function servedTools(tools: readonly ToolDefinition[], options: ServingOptions): ToolDefinition[] {
  return tools.map((tool): ToolDefinition => {
    const execute = async (args: unknown, ctx: ToolContext): Promise<JsonValue> => {
      const asked = await options.askedArgs(ctx);
      const base = { callId: ctx.callId, tool: tool.name, args: asked };
      const recorded = options.results.take(tool.name, asked);
      if (recorded?.result) {
        options.onCall({ ...base, outcome: 'served', recordedCallId: recorded.callId });
        if (recorded.result.ok) return recorded.result.output;
        throw recordedError(recorded.result);
      }
      if (options.allowReadOnly && isReadOnly(tool)) {
        options.onCall({ ...base, outcome: 'executed' });
        return (await tool.execute(args, ctx)) as JsonValue;
      }
      options.onCall({ ...base, outcome: 'not_executed' });
      throw new NotExecutedUnderEvalError(tool.name, canonicalJson(asked));
    };
    return {
      name: tool.name,
      version: tool.version,
      description: tool.description,
      input: tool.input,
      inputSchema: tool.inputSchema,
      policy: 'rerun',
      timeoutMs: tool.timeoutMs,
      execute,
    };
  });
}

/** A recorded error result as the error that writes the same `{error, message}` result again. */
function recordedError(result: NonNullable<EvalToolCall['result']>): RecordedToolError {
  const output = result.output as { error?: unknown; message?: unknown } | null;
  const shaped = typeof output === 'object' && output !== null && !Array.isArray(output);
  const code = result.errorCode ?? (shaped && typeof output.error === 'string' ? output.error : 'tool_error');
  const message =
    shaped && typeof output.message === 'string' ? output.message : typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
  return new RecordedToolError(code, message);
}
