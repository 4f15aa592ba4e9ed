import { ValidationError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { opOfCallId, parseEvent, type RunEvent } from '../core/events.js';
import { loggedCall, requestApproval, requestMessage, requestSignal } from '../engine/control-requests.js';
import type { EngineDeps } from '../engine/engine.js';
import { forkRun, type ForkResult } from '../engine/fork.js';
import type { RunRef } from '../core/run-ref.js';
import type { ApproveBody, ForkBody, MessageBody, SignalBody } from './control-schemas.js';
import { bodyValue } from './run-views.js';
import type { RunView } from './schemas.js';
import type { Caller } from './tenant.js';

/** The control routes' part of the RunService: every method scoped by the caller's tenant. */
export interface ControlService {
  approve(caller: Caller, runId: string, body: ApproveBody): Promise<{ inboxId: string }>;
  signal(caller: Caller, runId: string, body: SignalBody): Promise<{ inboxId: string; callId: string }>;
  message(caller: Caller, runId: string, body: MessageBody): Promise<{ inboxId: string }>;
  fork(caller: Caller, runId: string, body: ForkBody): Promise<ForkResult>;
}

/** Engine validation errors name fields by their body path, as the API's own validation does. */
async function inBody<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ValidationError) {
      throw new ValidationError(
        error.message,
        error.issues.map((i) => ({ path: `body.${i.path}`, message: i.message })),
      );
    }
    throw error;
  }
}

export function engineControlService(deps: EngineDeps): ControlService {
  return {
    approve: (caller, runId, body) =>
      inBody(
        requestApproval(
          deps,
          { tenant: caller.tenant, runId },
          {
            callId: body.callId,
            decision: body.decision,
            ...(body.args !== undefined ? { args: body.args as JsonValue } : {}),
            ...(body.argsHash !== undefined ? { argsHash: body.argsHash } : {}),
            ...(body.comment !== undefined ? { comment: body.comment } : {}),
          },
          caller.principal,
        ),
      ),
    signal: (caller, runId, body) =>
      inBody(requestSignal(deps, { tenant: caller.tenant, runId }, { signal: body.signal, payload: (body.payload ?? null) as JsonValue }, caller.principal)),
    message: (caller, runId, body) =>
      inBody(
        requestMessage(
          deps,
          { tenant: caller.tenant, runId },
          { input: body.input as JsonValue, ...(body.messageId !== undefined ? { messageId: body.messageId } : {}) },
          caller.principal,
        ),
      ),
    fork: (caller, runId, body) =>
      inBody(
        forkRun(deps, {
          tenant: caller.tenant,
          from: runId,
          atSeq: body.atSeq,
          ...(body.runId !== undefined ? { runId: body.runId } : {}),
          ...(body.input !== undefined ? { input: body.input as JsonValue } : {}),
          ...(body.version !== undefined ? { version: body.version } : {}),
        }),
      ),
  };
}

/** A person approving a call should see what they approve: the arguments the model gave. */
export async function withApprovalArgs(deps: EngineDeps, run: RunRef, view: RunView): Promise<RunView> {
  for (const w of view.waiting ?? []) {
    if (w.kind !== 'approval') continue;
    if (opOfCallId(w.callId) !== undefined) {
      // A workflow's ctx.approval: the arguments are the ones its op_started pinned.
      const raw = await deps.log.readOne(run, w.seq).catch(() => undefined);
      const event = raw === undefined ? undefined : safeParse(raw);
      if (event?.type === 'op_started' && event.wait?.kind === 'approval') w.args = bodyValue(event.wait.args);
      continue;
    }
    const call = await loggedCall(deps, run, w.callId).catch(() => undefined);
    if (call) w.args = bodyValue(call.args);
  }
  return view;
}

function safeParse(raw: unknown): RunEvent | undefined {
  try {
    return parseEvent(raw);
  } catch {
    return undefined;
  }
}
