import type { JsonValue } from '../../core/json.js';
import { zodIssuesText } from '../../core/zod-issues.js';
import type { OpState } from '../../core/workflow-state.js';
import { ChildRunFailedError, StepFailedError, WorkflowUsageError } from '../../core/workflow-errors.js';
import type { Body } from '../../core/body.js';
import type { OpRequest } from './op-specs.js';

/**
 * What an operation's recorded result gives the code: the same value (or error) live and on
 * every replay, because it is built from the log alone (the redacted, recorded form: a step's
 * result is what the log holds, not the object its function returned).
 */
/** What reads a recorded body: the run's payload codec, or a replay check's reader of an exported log. */
export interface BodyReader {
  resolve(body: Body): Promise<JsonValue>;
}

export async function deliveredValue(codec: BodyReader, request: OpRequest, op: OpState): Promise<{ ok: true; value: unknown } | { ok: false; error: Error }> {
  const result = op.result!;
  const value = await codec.resolve(result.output);
  const failure = () => failureOf(value, result.errorCode);
  switch (op.kind) {
    case 'step':
      if (result.ok) return { ok: true, value: result.void ? undefined : value };
      return { ok: false, error: new StepFailedError(op.name, op.op, failure()) };
    case 'sleep':
      return { ok: true, value: undefined };
    case 'signal': {
      if (!result.ok) return { ok: true, value: { timedOut: true } };
      const spec = request.spec.kind === 'signal' ? request.spec : undefined;
      const parsed = spec ? spec.payload.safeParse(value) : { success: true as const, data: value };
      if (!parsed.success) {
        return {
          ok: false,
          error: new WorkflowUsageError(`signal "${op.name}" (op-${op.op}) carried a payload its schema refuses: ${zodIssuesText(parsed.error)}`),
        };
      }
      return { ok: true, value: { timedOut: false, payload: parsed.data, sentBy: result.sentBy ?? 'unknown' } };
    }
    case 'approval':
      return { ok: true, value: await approvalOutcome(codec, request, op, value) };
    case 'child':
      if (result.ok) return { ok: true, value };
      return { ok: false, error: new ChildRunFailedError(op.name, op.op, { ...failure(), ...childRunIdOf(value) }) };
    case 'now':
    case 'random':
    case 'uuid':
      return { ok: true, value };
  }
}

function failureOf(value: JsonValue, errorCode: string | undefined): { code: string; message: string } {
  const record = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const code = typeof record.error === 'string' ? record.error : (errorCode ?? 'failed');
  const message = typeof record.message === 'string' ? record.message : JSON.stringify(value);
  return { code, message };
}

function childRunIdOf(value: JsonValue): { childRunId?: string } {
  const id = value !== null && typeof value === 'object' && !Array.isArray(value) ? value.childRunId : undefined;
  return typeof id === 'string' ? { childRunId: id } : {};
}

/** A person's decision (or the expiry) as the code reads it; approved args are the logged ones, or the edit. */
async function approvalOutcome(codec: BodyReader, request: OpRequest, op: OpState, value: JsonValue): Promise<unknown> {
  const result = op.result!;
  const record = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const by = typeof record.by === 'string' ? record.by : undefined;
  const comment = typeof record.comment === 'string' ? record.comment : undefined;
  const extra = { ...(by !== undefined ? { by } : {}), ...(comment !== undefined ? { comment } : {}) };
  if (!result.ok) return { approved: false, reason: result.errorCode === 'approval_expired' ? 'expired' : 'rejected', ...extra };
  const edited = record.decision === 'edit';
  const wait = op.wait?.kind === 'approval' ? op.wait : undefined;
  const raw = edited ? record.args : wait ? await codec.resolve(wait.args) : null;
  const schema = request.spec.kind === 'approval' ? request.spec.schema : undefined;
  const parsed = schema ? schema.safeParse(raw) : { success: true as const, data: raw };
  const args = parsed.success ? parsed.data : raw;
  return { approved: true, args, edited, by: by ?? 'unknown', ...(comment !== undefined ? { comment } : {}) };
}
