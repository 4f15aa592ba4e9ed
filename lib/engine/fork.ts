import { RunConflictError, RunNotFoundError, ValidationError } from '../core/errors.js';
import { agentPins, parseEvent, type EventOf, type RunEvent } from '../core/events.js';
import { foldLog } from '../core/fold.js';
import type { JsonValue } from '../core/json.js';
import type { RunState } from '../core/state.js';
import { RUN_ID_PATTERN, type RunRef } from '../core/run-ref.js';
import type { AgentDefinition } from '../authoring/types.js';
import { ForkConflictError } from './control-errors.js';
import { echoValue } from '../core/echo.js';
import type { EngineDeps } from './engine.js';
import { hashJson } from '../support/hash.js';
import { projectHead } from './head-projection.js';
import { contextPin, initialHead } from './start-run.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { parseRunInput } from '../authoring/run-input.js';
import { checkAttachments } from './attachments.js';
import { resolveInstructions, type ResolvedInstructions } from '../authoring/instructions.js';
import { admitRun, keepsSlot } from './admission-gate.js';
import { checkWorkflowBoundary, checkWorkflowForkInput, forkedWorkflow, workflowForkPins } from './workflow/workflow-fork.js';

export interface ForkRequest {
  tenant: string;
  /** The run to fork (of the same tenant). */
  from: string;
  /** A turn boundary of the source: 1, or a seq after which every call of the turn has its result. */
  atSeq: number;
  /** The fork's id; generated when absent. Creating the same fork again is a no-op. */
  runId?: string;
  /** Replaces the last user message (the run's input, or the latest follow-up). */
  input?: JsonValue;
  /** Re-pin this version of the source's agent (every copied call must fit its schemas). */
  version?: string;
}

export interface ForkResult {
  runId: string;
  created: boolean;
  status: string;
  forkedFrom: { runId: string; seq: number };
}

/**
 * Fork (or rerun) a run from a turn boundary: a new run of the same tenant whose log is a
 * run_started with the source's pinned content (or a newer version's, after checking every copied
 * call against it) and `forkedFrom`, then the source's events 2..atSeq with the same seqs (so call
 * ids stay valid; payload references are shared, not copied), then it continues live.
 *
 * Nothing copied runs again: at a boundary every call has its result, so the fork's first step
 * calls the model; new calls get the fork's own idempotency keys (they carry the fork's run id).
 * The copied usage counts against the copied budgets. The deadline is the source's duration again,
 * counted from the fork (wall time is not usage; a fork of a week-old run would otherwise be dead).
 *
 * Creation is idempotent without a transaction, like startRun: run_started (conditional, with the
 * request hash), then each copied event, then the head, then the tick. The copies carry the stored
 * run_started's writer, so a retry after a crash recognises the ones it made and finishes.
 */
export async function forkRun(deps: EngineDeps, request: ForkRequest): Promise<ForkResult> {
  const source: RunRef = { tenant: request.tenant, runId: request.from };
  // 1. Read and check the source prefix.
  const prefix = dropTrailingReservation(await readPrefix(deps, source, request.atSeq));
  const sourceStarted = prefix[0] as EventOf<'run_started'>;
  const state = foldLog(prefix);
  if (sourceStarted.workflow) return forkWorkflow(deps, request, prefix, state);
  checkBoundary(state, prefix, request.atSeq);
  const agent = request.version === undefined ? undefined : await repinnable(deps, sourceStarted, state, request.version);

  // 2. The fork's run_started.
  const { fork, requestHash, now, writer } = forkIdentity(deps, request);
  const replaceAt = request.input === undefined ? undefined : lastUserMessageSeq(prefix);
  if (request.input !== undefined) {
    // First, as it is about this deploy and not the input: can the run's instructions be built again?
    if (replaceAt === 1 && !agent) rebuildingAgent(deps, sourceStarted);
    checkForkInput(deps, sourceStarted, agent, request.input);
    await checkAttachments(deps.blobs, request.tenant, agent?.model.id ?? agentPins(sourceStarted).model.id, request.input, 'input');
  }
  const replaceInput = replaceAt === 1 ? request.input : undefined;
  // Instructions are built once per run: a retry of a fork that exists is answered from its log
  // (looked up only when a function would build them, as startRun does).
  const builds = agent ? typeof agent.system.text === 'function' : replaceInput !== undefined && sourceStarted.prompt?.resolved === true;
  const exists = builds && request.runId !== undefined && (await deps.log.readOne(fork, 1)) !== undefined;
  const instructions = exists
    ? undefined
    : agent
      ? await repinnedInstructions(deps, fork, sourceStarted, agent, replaceInput)
      : await rebuiltInstructions(deps, fork, sourceStarted, replaceInput);
  // 3. A fork is a run that works: it takes a slot of its tenant like any start, given back if
  //    anything below fails (admission-gate.ts); then its writes.
  return admitRun(
    deps,
    fork,
    { kind: 'fork' },
    async () => {
      const started = await forkStarted(deps, fork, sourceStarted, agent, { requestHash, atSeq: request.atSeq, now, replaceInput, instructions });
      const first = parseEvent({ ...started, v: 1, seq: 1, at: now, by: writer }) as EventOf<'run_started'>;
      return writeFork(deps, fork, request, { prefix, first, replaceAt, now });
    },
    (result) => keepsSlot(result.status),
  );
}

/** A workflow run's fork (workflow-fork.ts says where one may start and what it pins). */
async function forkWorkflow(deps: EngineDeps, request: ForkRequest, prefix: RunEvent[], state: RunState): Promise<ForkResult> {
  const source = prefix[0] as EventOf<'run_started'>;
  checkWorkflowBoundary(state, request.atSeq, request.input !== undefined);
  const workflow = forkedWorkflow(deps, source, request.version);
  if (request.input !== undefined) checkWorkflowForkInput(deps, source, workflow, request.input);
  const { fork, requestHash, now, writer } = forkIdentity(deps, request);
  return admitRun(
    deps,
    fork,
    { kind: 'fork' },
    async () => {
      const duration = Math.max(1, source.budgets.deadlineAt - source.at);
      const budgets = { ...source.budgets, deadlineAt: now + duration };
      const draft = await deps.codec.encodeDraft(
        fork,
        {
          type: 'run_started',
          tenant: fork.tenant,
          runId: fork.runId,
          requestHash,
          ...workflowForkPins(source, workflow),
          input: request.input === undefined ? source.input : { kind: 'inline', value: request.input },
          budgets,
          expiresAt: budgets.deadlineAt + deps.config.retentionFailedMs,
          forkedFrom: { runId: source.runId, seq: request.atSeq },
        },
        deps.checkpoints,
      );
      const first = parseEvent({ ...draft, v: 1, seq: 1, at: now, by: writer }) as EventOf<'run_started'>;
      return writeFork(deps, fork, request, { prefix, first, replaceAt: undefined, now });
    },
    (result) => keepsSlot(result.status),
  );
}

/**
 * Append run_started, then the copied events (a retry of this request finds its own writes),
 * then the head (a projection of what was copied) and the first tick.
 */
async function writeFork(
  deps: EngineDeps,
  fork: RunRef,
  request: ForkRequest,
  o: { prefix: RunEvent[]; first: EventOf<'run_started'>; replaceAt: number | undefined; now: number },
): Promise<ForkResult> {
  const { prefix, first, replaceAt, now } = o;
  const runId = fork.runId;
  const requestHash = first.requestHash;
  const cp = deps.checkpoints;
  let created = true;
  await cp?.at('before-append', `fork:run_started#1`);
  try {
    await deps.log.append(fork, first);
  } catch (error) {
    const existing = await deps.log.readOne(fork, 1);
    if (existing === undefined) throw error;
    if ((existing as { requestHash?: string }).requestHash !== requestHash) throw new RunConflictError(fork);
    created = false;
  }
  await cp?.at('after-append', `fork:run_started#1`);
  const stored = created ? first : (parseEvent(await deps.log.readOne(fork, 1)) as EventOf<'run_started'>);
  const copied: RunEvent[] = [stored];
  for (const event of prefix.slice(1)) {
    let copy = { ...event, by: stored.by } as RunEvent;
    if (copy.seq === replaceAt && copy.type === 'user_message' && request.input !== undefined) {
      const draft = await deps.codec.encodeDraft(
        fork,
        { type: 'user_message', input: { kind: 'inline', value: request.input }, sentBy: copy.sentBy, inboxId: copy.inboxId },
        cp,
      );
      copy = parseEvent({ ...draft, v: 1, seq: copy.seq, at: copy.at, by: stored.by });
    }
    await appendChecked(deps, fork, copy);
    copied.push(copy);
  }

  const forkState = foldLog(copied);
  const head = { ...initialHead(stored, now), ...projectHead(forkState, now, deps.config) };
  await deps.heads.createHead(head);
  await deps.queue.enqueue(fork, { dedupeId: `${runId}:fork:${request.atSeq}` });
  const current = await deps.heads.getHead(fork);
  return { runId, created, status: current?.status ?? 'running', forkedFrom: { runId: request.from, seq: request.atSeq } };
}

/** The fork's run, request hash, time and writer (both kinds of run). */
function forkIdentity(deps: EngineDeps, request: ForkRequest) {
  const runId = request.runId ?? deps.ids.inboxId().toLowerCase();
  if (!RUN_ID_PATTERN.test(runId)) throw new ValidationError('invalid runId', [{ path: 'runId', message: `must match ${RUN_ID_PATTERN}` }]);
  const fork: RunRef = { tenant: request.tenant, runId };
  const requestHash = hashJson({
    forkOf: request.from,
    atSeq: request.atSeq,
    input: request.input === undefined ? null : deps.codec.redactJson(request.input),
    version: request.version ?? null,
  });
  // run_started gets this attempt's own nonce (a second request is then a conflict, answered from
  // the stored request hash); every copied event carries the stored run_started's writer, so a retry
  // after a crash recognises the copies it already made as its own writes.
  const writer = { epoch: 0, nonce: `fork:${deps.ids.nonce()}` };
  return { fork, requestHash, now: deps.clock.now(), writer };
}

async function appendChecked(deps: EngineDeps, run: RunRef, event: RunEvent): Promise<void> {
  await deps.checkpoints?.at('before-append', `fork:${event.type}#${event.seq}`);
  await deps.log.append(run, event);
  await deps.checkpoints?.at('after-append', `fork:${event.type}#${event.seq}`);
}

async function readPrefix(deps: EngineDeps, run: RunRef, atSeq: number): Promise<RunEvent[]> {
  if (!(await deps.heads.getHead(run))) throw new RunNotFoundError(run);
  const events: RunEvent[] = [];
  let after = 0;
  while (events.length < atSeq) {
    const page = await deps.log.read(run, { afterSeq: after, limit: atSeq - events.length });
    for (const raw of page.events) events.push(parseEvent(raw));
    if (page.nextAfterSeq === undefined) break;
    after = page.nextAfterSeq;
  }
  if (events.length < atSeq) {
    throw new ValidationError(`seq ${atSeq} is beyond the log of ${run.runId}`, [{ path: 'atSeq', message: `the log ends at seq ${events.length}` }]);
  }
  return events;
}

/**
 * A result that resolved its turn may carry the next model call's reservation: that call belongs
 * to the turn after the fork point, so the fork copies the result without it (and calls the model
 * under its own reservation). The boundary is the same one an older log had before model_started.
 */
function dropTrailingReservation(prefix: RunEvent[]): RunEvent[] {
  const last = prefix[prefix.length - 1];
  if (last?.type !== 'tool_result' || !last.reservation) return prefix;
  const { reservation: _carried, ...plain } = last;
  return [...prefix.slice(0, -1), plain];
}

/** Right after run_started, or after a model response whose calls all have results. */
function checkBoundary(state: RunState, prefix: RunEvent[], atSeq: number): void {
  if (atSeq === 1) return;
  const last = prefix[prefix.length - 1];
  if (state.outcome) throw new ForkConflictError(`seq ${atSeq} is ${last?.type}, the end of the run: fork at an earlier turn boundary`);
  const open = state.turnCalls.filter((id) => state.calls[id]?.status !== 'done');
  const startedOpen = open.find((id) => state.calls[id]?.status === 'started');
  if (startedOpen) {
    const call = state.calls[startedOpen];
    throw new ForkConflictError(`seq ${atSeq} is not a turn boundary: call ${startedOpen} (${call?.name}) started and has no result there`);
  }
  if (open.length > 0) throw new ForkConflictError(`seq ${atSeq} is not a turn boundary: call ${open[0]} has no result there`);
  if (state.openModel) throw new ForkConflictError(`seq ${atSeq} is not a turn boundary: the model call at seq ${state.openModel.seq} has no response there`);
  if (state.attention.length > 0 || state.cancel)
    throw new ForkConflictError(`seq ${atSeq} is not a turn boundary: the run is ${state.cancel ? 'cancelling' : 'parked'} there`);
  if (!prefix.some((e) => e.type === 'model_response')) throw new ForkConflictError(`seq ${atSeq} is not a turn boundary: no model response yet (fork at 1)`);
}

/** The newer agent version, if every copied call that ran (or was meant to) fits its schemas. */
async function repinnable(deps: EngineDeps, started: EventOf<'run_started'>, state: RunState, version: string): Promise<AgentDefinition> {
  const agent = deps.registry.agent(started.agent.name, version);
  if (!agent) {
    const echo = echoValue(version, (t) => deps.codec.redactText(t));
    throw new ValidationError(`unknown version ${echo} of ${started.agent.name}`, [{ path: 'version', message: 'not registered' }]);
  }
  for (const call of Object.values(state.calls)) {
    // Calls refused before they could run (unknown tool, bad arguments) are history, not a contract.
    if (call.result?.source === 'validation') continue;
    const tool = agent.tools.find((t) => t.name === call.name);
    if (!tool) throw new ForkConflictError(`call ${call.callId} (${call.name}) has no tool in ${agent.name}@${version}`);
    const parsed = tool.input.safeParse(await deps.codec.resolve(call.args));
    if (!parsed.success) {
      throw new ForkConflictError(
        `call ${call.callId} (${call.name}) does not fit ${call.name}@${tool.version} of ${agent.name}@${version}: ${zodIssuesText(parsed.error)}`,
      );
    }
  }
  return agent;
}

/**
 * A fork's new input (the run's input or a follow-up) must fit the input schema of the agent the
 * fork pins: the re-pinned version, or the source's own version as registered here.
 */
function checkForkInput(deps: EngineDeps, source: EventOf<'run_started'>, repinned: AgentDefinition | undefined, input: JsonValue): void {
  const agent = repinned ?? deps.registry.agent(source.agent.name, source.agent.version);
  if (agent) {
    parseRunInput(agent, input);
    return;
  }
  if (source.inputSchema) {
    throw new ValidationError(`${source.agent.name}@${source.agent.version} is not registered here: its input schema cannot be checked`, [
      { path: 'input', message: 'cannot be checked against the pinned input schema' },
    ]);
  }
}

/**
 * The system text a re-pinned fork pins: the new version's fixed text, or what its instructions
 * function builds for the fork's input (the new version has no text pinned for this run yet). A
 * fork that keeps its version keeps the source's text, unless it replaces the input (rebuiltInstructions).
 */
async function repinnedInstructions(
  deps: EngineDeps,
  fork: RunRef,
  source: EventOf<'run_started'>,
  agent: AgentDefinition,
  replaceInput: JsonValue | undefined,
): Promise<ResolvedInstructions> {
  const input = replaceInput ?? (await deps.codec.resolve(source.input));
  let parsed: unknown;
  try {
    parsed = parseRunInput(agent, input);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ForkConflictError(
      `the run's input does not fit the input schema of ${agent.name}@${agent.version}: ${error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    );
  }
  return resolveInstructions(
    agent,
    parsed,
    { tenant: fork.tenant, runId: fork.runId, ...(source.parent ? { parent: { ...source.parent } } : {}) },
    deps.registry.appContext,
  );
}

/**
 * A fork that keeps its version but replaces the run's input: instructions an instructions function
 * built from the old input describe the old input (a 32,500 EUR vendor's "standard" review for a
 * 150,000 EUR one), so they are built again from the new input by the same registered version and
 * pinned. When that version is not registered here (or its instructions changed under the same
 * version), nothing can build them: the fork is refused rather than run under the old text.
 * Fixed text, or a fork that keeps the input, keeps the source's text (undefined).
 */
async function rebuiltInstructions(
  deps: EngineDeps,
  fork: RunRef,
  source: EventOf<'run_started'>,
  replaceInput: JsonValue | undefined,
): Promise<ResolvedInstructions | undefined> {
  const agent = replaceInput === undefined ? undefined : rebuildingAgent(deps, source);
  if (replaceInput === undefined || !agent) return undefined;
  return resolveInstructions(
    agent,
    parseRunInput(agent, replaceInput),
    { tenant: fork.tenant, runId: fork.runId, ...(source.parent ? { parent: { ...source.parent } } : {}) },
    deps.registry.appContext,
  );
}

/**
 * The registered agent that builds the source's instructions again for a new input: undefined for
 * fixed text (nothing to build); a ForkConflictError when the version that built them is not
 * registered here, or is registered with other instructions under the same version.
 */
function rebuildingAgent(deps: EngineDeps, source: EventOf<'run_started'>): AgentDefinition | undefined {
  if (!source.prompt?.resolved) return undefined;
  const id = `${source.agent.name}@${source.agent.version}`;
  const agent = deps.registry.agent(source.agent.name, source.agent.version);
  const why = !agent
    ? `${id} is not registered here`
    : agent.system.version !== source.prompt.version
      ? `${id} is registered here with instructions ${agent.system.version}, not the ${source.prompt.version} the run pinned`
      : undefined;
  if (!agent || why) {
    throw new ForkConflictError(
      `the run's instructions were built from its input by ${id}, and ${why}: a fork with a new input cannot build them again ` +
        `(fork without input to keep them, or pass a registered version to re-pin)`,
    );
  }
  return agent;
}

/** seq of the event holding the last user message of the prefix: run_started (1) or a user_message. */
function lastUserMessageSeq(prefix: RunEvent[]): number {
  for (let i = prefix.length - 1; i > 0; i--) if (prefix[i]?.type === 'user_message') return prefix[i]?.seq ?? 1;
  return 1;
}

async function forkStarted(
  deps: EngineDeps,
  fork: RunRef,
  source: EventOf<'run_started'>,
  agent: AgentDefinition | undefined,
  o: { requestHash: string; atSeq: number; now: number; replaceInput: JsonValue | undefined; instructions: ResolvedInstructions | undefined },
) {
  const duration = Math.max(1, source.budgets.deadlineAt - source.at);
  const budgets = { ...source.budgets, deadlineAt: o.now + duration };
  const text = o.instructions;
  // The source's version with its instructions built again for the new input (rebuiltInstructions).
  const prompt =
    text && !agent && source.prompt ? { ...source.prompt, text: { kind: 'inline' as const, value: text.text }, sha256: text.sha256 } : source.prompt;
  const pins =
    agent && text
      ? {
          agent: { name: agent.name, version: agent.version },
          model: {
            id: agent.model.id,
            maxOutputTokens: agent.model.maxOutputTokens,
            price: agent.model.price ?? agentPins(source).model.price,
            ...(agent.model.settings ? { settings: agent.model.settings } : {}),
          },
          prompt: {
            version: agent.system.version,
            text: { kind: 'inline' as const, value: text.text },
            sha256: text.sha256,
            ...(text.resolved ? { resolved: true as const } : {}),
          },
          tools: agent.pinnedTools,
          graceMs: agent.graceMs ?? source.graceMs,
          ...(agent.inputSchema ? { inputSchema: agent.inputSchema } : {}),
          ...(agent.pinnedOutput ? { output: agent.pinnedOutput } : {}),
          ...contextPin(agent, agent.model.price ?? agentPins(source).model.price),
        }
      : {
          agent: source.agent,
          model: source.model,
          prompt,
          tools: source.tools,
          graceMs: source.graceMs,
          ...(source.inputSchema ? { inputSchema: source.inputSchema } : {}),
          ...(source.output ? { output: source.output } : {}),
          ...(source.context ? { context: source.context } : {}),
        };
  return deps.codec.encodeDraft(
    fork,
    {
      type: 'run_started',
      tenant: fork.tenant,
      runId: fork.runId,
      requestHash: o.requestHash,
      ...pins,
      input: o.replaceInput === undefined ? source.input : { kind: 'inline', value: o.replaceInput },
      budgets,
      expiresAt: budgets.deadlineAt + deps.config.retentionFailedMs,
      forkedFrom: { runId: source.runId, seq: o.atSeq },
    },
    deps.checkpoints,
  );
}
