import { RunNotFoundError, ValidationError } from '../core/errors.js';
import { agentPins, opCallId as opCallIdOf, opOfCallId, parseEvent, type EventOf } from '../core/events.js';
import { jsonSchemaProblem } from './ingest-context.js';
import type { InboxItem } from '../core/inbox.js';
import { canonicalJson, type JsonValue } from '../core/json.js';
import type { OpenWait, RunHead } from '../ports/run-heads.js';
import { RUN_ID_PATTERN, type RunRef } from '../core/run-ref.js';
import { ApprovalConflictError, CallNotFoundError, MessageConflictError, SignalConflictError, SignalNotAwaitedError, refuseIfEnded } from './control-errors.js';
import { echoValue } from '../core/echo.js';
import type { EngineDeps } from './engine.js';
import { hintedTick } from '../ports/step-queue.js';
import { zodIssues } from '../core/zod-issues.js';
import { parseRunInput } from '../authoring/run-input.js';
import { attachmentCandidates } from '../core/attachments.js';
import { checkAttachments } from './attachments.js';
import { admitRun } from './admission-gate.js';
import { plural } from '../core/plural.js';

/**
 * Approvals, signals and follow-up messages, as the API and the CLI send them. Like cancel and
 * resolve they only write an inbox item and wake the run: the lease holder turns the item into an
 * event. Each checks the head first, so a request that cannot apply is refused now (404 unknown
 * run or call, 409 naming the state, 400 with paths for arguments and payloads that do not fit
 * the pinned schema) instead of being accepted and dropped later. Approvals and signals use one
 * inbox id per call, so a second decision or signal for the same call is refused at the inbox.
 */

export interface ApprovalRequest {
  callId: string;
  decision: 'approve' | 'reject' | 'edit';
  /** For edit: the arguments that replace the model's. */
  args?: JsonValue;
  /** The hash of the arguments the person looked at (GET /runs/{id} shows it). */
  argsHash?: string;
  comment?: string;
}

async function requireHead(deps: EngineDeps, run: RunRef): Promise<RunHead> {
  const head = await deps.heads.getHead(run);
  if (!head) throw new RunNotFoundError(run);
  return head;
}

/** The run's pinned content (its run_started). */
export async function pinnedContent(deps: EngineDeps, run: RunRef): Promise<EventOf<'run_started'>> {
  const event = parseEvent(await deps.log.readOne(run, 1));
  if (event.type !== 'run_started') throw new RunNotFoundError(run);
  return event;
}

/** The call as the model decided it: `<seq>-<index>` names a model_response and a position in it. */
export async function loggedCall(deps: EngineDeps, run: RunRef, callId: string): Promise<EventOf<'model_response'>['calls'][number]> {
  const [seq, index] = callId.split('-').map(Number);
  const raw = seq !== undefined && Number.isSafeInteger(seq) && seq > 0 ? await deps.log.readOne(run, seq) : undefined;
  const event = raw === undefined ? undefined : parseEvent(raw);
  const call = event?.type === 'model_response' ? event.calls[index ?? -1] : undefined;
  if (!call || call.callId !== callId) throw new CallNotFoundError(run.runId, callId);
  return call;
}

function waitsOf(head: RunHead): OpenWait[] {
  return head.waits ?? [];
}

/**
 * Put an item whose id is one per purpose (one decision per call, one signal per call). A repeat
 * of the very same request (a client retry) is accepted again; any other is a conflict.
 */
async function submitOnce(deps: EngineDeps, run: RunRef, head: RunHead, raw: InboxItem, conflict: () => Error): Promise<{ inboxId: string }> {
  // Stored redacted, and compared redacted: a retry of the same request is still the same item.
  const item = deps.codec.inboxItem(raw);
  await deps.checkpoints?.at('before-inbox', `${item.kind}#${item.id}`);
  if (!(await deps.inbox.put(run, item))) {
    const existing = (await deps.inbox.list(run)).find((i) => i.id === item.id);
    if (!existing || canonicalJson(existing) !== canonicalJson(item)) throw conflict();
  }
  await deps.checkpoints?.at('after-inbox', `${item.kind}#${item.id}`);
  await deps.queue.enqueue(hintedTick(run, head), { dedupeId: `${run.runId}:inbox:${item.id}` });
  return { inboxId: item.id };
}

/** approve, reject or edit a call that awaits approval. The first decision wins. */
export async function requestApproval(deps: EngineDeps, run: RunRef, request: ApprovalRequest, by: string): Promise<{ inboxId: string }> {
  const head = await requireHead(deps, run);
  refuseIfEnded(run, head.status, 'approval');
  if (opOfCallId(request.callId) !== undefined) return requestOpApproval(deps, run, head, request, by);
  const call = await loggedCall(deps, run, request.callId);
  const pending = waitsOf(head).find((w) => w.kind === 'approval' && w.callId === request.callId);
  if (!pending) throw new ApprovalConflictError(`call ${request.callId} (${call.name}) awaits no approval; run ${run.runId} is ${head.status}`);
  if (request.argsHash !== undefined && request.argsHash !== pending.argsHash) {
    throw new ApprovalConflictError(
      `call ${request.callId} asks about arguments ${pending.argsHash?.slice(0, 12)}, not ${request.argsHash.slice(0, 12)}: look again`,
    );
  }
  if (request.decision === 'edit') {
    if (request.args === undefined) throw new ValidationError('an edit needs args', [{ path: 'args', message: 'required when decision is edit' }]);
    const started = await pinnedContent(deps, run);
    const pinned = started.tools.find((t) => t.name === call.name);
    const impl = pinned && deps.registry.tool(pinned.name, pinned.schemaHash, started.agent.name);
    if (!impl) throw new ApprovalConflictError(`no implementation of ${call.name} for its pinned schema is registered here to check the edit against`);
    const parsed = impl.input.safeParse(request.args);
    if (!parsed.success) throw new ValidationError(`the edited arguments do not fit ${call.name}'s pinned schema`, zodIssues(parsed.error, { prefix: 'args' }));
  }
  const item: InboxItem = {
    id: `approval-${request.callId}`,
    kind: 'approval',
    by,
    callId: request.callId,
    decision: request.decision,
    ...(request.args !== undefined && request.decision === 'edit' ? { args: request.args } : {}),
    ...(request.argsHash !== undefined ? { argsHash: request.argsHash } : {}),
    ...(request.comment ? { comment: request.comment } : {}),
  };
  return submitOnce(deps, run, head, item, () => new ApprovalConflictError(`call ${request.callId} already has a decision (the first decision wins)`));
}

/** A workflow's ctx.approval (call id `op-<n>`): the same rules, checked against what the operation pinned. */
async function requestOpApproval(deps: EngineDeps, run: RunRef, head: RunHead, request: ApprovalRequest, by: string): Promise<{ inboxId: string }> {
  const pending = waitsOf(head).find((w) => w.kind === 'approval' && w.callId === request.callId);
  if (!pending) throw new ApprovalConflictError(`operation ${request.callId} awaits no approval; run ${run.runId} is ${head.status}`);
  if (request.argsHash !== undefined && request.argsHash !== pending.argsHash) {
    throw new ApprovalConflictError(
      `${request.callId} asks about arguments ${pending.argsHash?.slice(0, 12)}, not ${request.argsHash.slice(0, 12)}: look again`,
    );
  }
  if (request.decision === 'edit') {
    if (request.args === undefined) throw new ValidationError('an edit needs args', [{ path: 'args', message: 'required when decision is edit' }]);
    const wait = await openingWait(deps, run, pending.seq, request.callId);
    const schema = wait?.kind === 'approval' ? wait.argsSchema : undefined;
    if (!schema) throw new ApprovalConflictError(`${request.callId} (${pending.tool}) takes no edits: its workflow gave the approval no schema`);
    const problem = jsonSchemaProblem(schema, request.args);
    if (problem) throw new ValidationError(`the edited arguments do not fit ${pending.tool}'s schema`, [{ path: 'args', message: problem }]);
  }
  const item: InboxItem = {
    id: `approval-${request.callId}`,
    kind: 'approval',
    by,
    callId: request.callId,
    decision: request.decision,
    ...(request.args !== undefined && request.decision === 'edit' ? { args: request.args } : {}),
    ...(request.argsHash !== undefined ? { argsHash: request.argsHash } : {}),
    ...(request.comment ? { comment: request.comment } : {}),
  };
  return submitOnce(deps, run, head, item, () => new ApprovalConflictError(`${request.callId} already has a decision (the first decision wins)`));
}

/** The wait an operation's op_started (at `seq`) pinned. */
async function openingWait(deps: EngineDeps, run: RunRef, seq: number, callId: string): Promise<EventOf<'op_started'>['wait']> {
  const raw = await deps.log.readOne(run, seq);
  const event = raw === undefined ? undefined : parseEvent(raw);
  if (event?.type !== 'op_started' || opCallIdOf(event.op) !== callId) throw new CallNotFoundError(run.runId, callId);
  return event.wait;
}

/** Deliver a signal to the oldest call waiting for it; its payload must fit the pinned schema. */
export async function requestSignal(
  deps: EngineDeps,
  run: RunRef,
  request: { signal: string; payload: JsonValue },
  by: string,
): Promise<{ inboxId: string; callId: string }> {
  const head = await requireHead(deps, run);
  refuseIfEnded(run, head.status, 'signal');
  // The name as sent, repeated in errors only when it holds no secret.
  const name = echoValue(request.signal, (t) => deps.codec.redactText(t));
  const waiting = waitsOf(head).filter((w) => w.kind === 'signal' && w.signal === request.signal);
  const target = waiting[0];
  if (!target) {
    const others = waitsOf(head)
      .filter((w) => w.kind === 'signal')
      .map((w) => `"${w.signal}"`);
    const what = others.length > 0 ? `it waits for ${others.join(', ')}` : `it is ${head.status}`;
    throw new SignalNotAwaitedError(`no call of run ${run.runId} waits for signal ${name}: ${what}`);
  }
  if (target.until !== undefined && deps.clock.now() >= target.until) {
    throw new SignalConflictError(`call ${target.callId} stopped waiting for ${name} at ${new Date(target.until).toISOString()}`);
  }
  if (opOfCallId(target.callId) !== undefined) {
    // A workflow's waitForSignal: the payload's JSON Schema is pinned in the operation's op_started.
    const wait = await openingWait(deps, run, target.seq, target.callId);
    const problem = wait?.kind === 'signal' ? jsonSchemaProblem(wait.payloadSchema, request.payload) : 'the operation waits for no signal';
    if (problem) throw new ValidationError(`the payload does not fit signal ${name}`, [{ path: 'payload', message: problem }]);
  } else {
    const started = await pinnedContent(deps, run);
    const pinned = started.tools.find((t) => t.name === target.tool);
    const wait = pinned && deps.registry.tool(pinned.name, pinned.schemaHash, started.agent.name)?.wait;
    if (wait?.kind !== 'signal')
      throw new SignalConflictError(`no implementation of ${target.tool} for its pinned schema is registered here to check the payload against`);
    const parsed = wait.payload.safeParse(request.payload);
    if (!parsed.success) throw new ValidationError(`the payload does not fit signal ${name}`, zodIssues(parsed.error, { prefix: 'payload' }));
  }
  const item: InboxItem = {
    id: `signal-${target.callId}`,
    kind: 'complete_call',
    by,
    callId: target.callId,
    via: 'signal',
    signal: request.signal,
    ok: true,
    output: request.payload,
  };
  const out = await submitOnce(deps, run, head, item, () => new SignalConflictError(`call ${target.callId} already received signal ${name}`));
  return { ...out, callId: target.callId };
}

/** Why a run cannot take one more model call, from its head (undefined: it can). */
function budgetLeft(head: RunHead, now: number): string | undefined {
  const b = head.budgets;
  const u = head.usage;
  if (!b) return undefined;
  if (now >= b.deadlineAt) return `its deadline ${new Date(b.deadlineAt).toISOString()} has passed`;
  if (u.steps >= b.maxSteps) return `${u.steps} of ${plural(b.maxSteps, 'model call')} are used`;
  if (u.costUsd >= b.maxCostUsd) return `$${u.costUsd.toFixed(4)} of $${b.maxCostUsd} is spent`;
  if (u.inputTokens >= b.maxInputTokens) return `${u.inputTokens} of ${plural(b.maxInputTokens, 'input token')} are used`;
  if (u.outputTokens >= b.maxOutputTokens) return `${u.outputTokens} of ${plural(b.maxOutputTokens, 'output token')} are used`;
  return undefined;
}

/**
 * A follow-up message: continues a completed run (same pins, what is left of its budgets), or waits
 * in the inbox of an active one for its next model call. `messageId` makes a retry harmless.
 */
/**
 * A follow-up message is the run's input again: it must fit the pinned agent's input schema. A run
 * whose version is not registered here is checked only if it pinned no schema (nothing to check).
 */
async function checkMessageInput(deps: EngineDeps, run: RunRef, head: RunHead, input: JsonValue): Promise<void> {
  const agent = deps.registry.agent(head.agent.name, head.agent.version);
  if (agent) {
    parseRunInput(agent, input);
    return;
  }
  const started = await deps.log.readOne(run, 1);
  if (started !== undefined && (parseEvent(started) as EventOf<'run_started'>).inputSchema) {
    throw new ValidationError(`${head.agent.name}@${head.agent.version} is not registered here: its input schema cannot be checked`, [
      { path: 'input', message: 'cannot be checked against the pinned input schema' },
    ]);
  }
}

export async function requestMessage(
  deps: EngineDeps,
  run: RunRef,
  request: { input: JsonValue; messageId?: string },
  by: string,
): Promise<{ inboxId: string }> {
  if (request.messageId !== undefined && !RUN_ID_PATTERN.test(request.messageId)) {
    throw new ValidationError('invalid messageId', [{ path: 'messageId', message: `must match ${RUN_ID_PATTERN}` }]);
  }
  const head = await requireHead(deps, run);
  const workflow =
    deps.registry.workflow(head.agent.name) !== undefined || (!deps.registry.agent(head.agent.name) && (await pinnedContent(deps, run)).workflow !== undefined);
  if (workflow) {
    throw new MessageConflictError(`run ${run.runId} is a workflow run: it takes signals (POST /runs/{id}/signals), not follow-up messages`);
  }
  await checkMessageInput(deps, run, head, request.input);
  if (attachmentCandidates(request.input, 'input').length > 0) {
    await checkAttachments(deps.blobs, run.tenant, agentPins(await pinnedContent(deps, run)).model.id, request.input, 'input');
  }
  if (head.status === 'failed' || head.status === 'cancelled') {
    throw new MessageConflictError(`run ${run.runId} is ${head.status}: only a completed or active run takes messages (fork it to continue)`);
  }
  if (head.park) throw new MessageConflictError(`run ${run.runId} is parked on its head (${head.park.reason}): resolve it first`);
  const exhausted = budgetLeft(head, deps.clock.now());
  if (exhausted) throw new MessageConflictError(`run ${run.runId} cannot answer another message: ${exhausted}`);
  const id = request.messageId !== undefined ? `message-${request.messageId}` : deps.ids.inboxId();
  const item: InboxItem = { id, kind: 'message', by, input: request.input };
  const submit = () => submitOnce(deps, run, head, item, () => new MessageConflictError(`message ${request.messageId} was sent before with other content`));
  // A completed run gave its slot back; a follow-up makes it work again, so it takes one again
  // (429 at the limit), given back if the message is not written. An active run holds its own.
  return head.status === 'completed' ? admitRun(deps, run, { kind: 'reopen' }, submit) : submit();
}
