import { Buffer } from 'node:buffer';
import { ManualClock } from '../../adapters/memory/manual-clock.js';
import { defineAgent } from '../../authoring/define-agent.js';
import type { Agents } from '../../authoring/define-agents.js';
import { AgentRegistry } from '../../authoring/registry.js';
import type { AgentDefinition } from '../../authoring/types.js';
import type { Body } from '../../core/body.js';
import { errorCode, errorMessage, LogbookError } from '../../core/errors.js';
import { parseEvent } from '../../core/events.js';
import { foldLog } from '../../core/fold.js';
import type { JsonValue } from '../../core/json.js';
import { attachmentKey } from '../../engine/attachments.js';
import { requestMessage } from '../../engine/control-requests.js';
import { startRun } from '../../engine/start-run.js';
import type { ModelResolver } from '../../ports/model-client.js';
import type { RunRef } from '../../core/run-ref.js';
import { driveRun, type Outside } from '../driver.js';
import { memoryStorage, spawnWorker, type World, type WorldStorage } from '../world.js';
import { decodeJson, type RecordedRead } from './recorded-run.js';
import { sideOf, type EvalSide } from './eval-side.js';
import type { ExportedRun } from './run-file.js';
import { readWholeLog } from './run-transfer.js';
import { RecordedResults, servedTools, type ServedCall } from './served-tools.js';

export interface CandidateRunOptions {
  agents: Agents;
  agent: AgentDefinition;
  /** Model clients tried after the candidate's own (defineAgents' `models`): the built-in providers, say. */
  models?: ModelResolver;
  allowReadOnly: boolean;
  /** Steps and sweeps a candidate run may take before it counts as not settling. */
  maxIterations: number;
}

export type CandidateRun = { side: EvalSide; calls: ServedCall[] } | { problem: { code: string; message: string } };

/**
 * Run the candidate on one recorded run's input, in a world of its own: fresh memory storage (the
 * source stack's data is never touched), a manual clock set to when the recorded run started, the
 * candidate agent with its tools served from the recorded results (served-tools.ts), its models,
 * app context and redaction. The recorded follow-up messages are sent one by one, each once the
 * candidate has answered the one before (a recorded cancel is not replayed).
 */
export async function runCandidate(recorded: ExportedRun, read: RecordedRead, options: CandidateRunOptions): Promise<CandidateRun> {
  const run: RunRef = { tenant: recorded.tenant, runId: recorded.runId };
  const storage = evalStorage();
  // The files the input refers to, as the source stack held them (sha256-checked when read).
  for (const file of recorded.attachments) {
    await storage.blobs.put(attachmentKey(run.tenant, file.sha256), new Uint8Array(Buffer.from(file.base64, 'base64')), { contentType: file.mediaType });
  }
  const calls: ServedCall[] = [];
  const tools = servedTools(options.agent.tools, {
    results: new RecordedResults(read.side.toolCalls),
    askedArgs: (ctx) => askedArgs(storage, run, ctx.callId),
    allowReadOnly: options.allowReadOnly,
    onCall: (call) => calls.push(call),
  });
  const registry = new AgentRegistry().register(defineAgent({ ...options.agent, tools }));
  registry.appContext = options.agents.registry.appContext;
  const { agents, models } = options;
  const world: World = {
    storage,
    clock: new ManualClock(read.state.started.at),
    registry,
    models: { resolve: (id) => agents.model(id) ?? models?.resolve(id) },
    ...(agents.redaction ? { redaction: agents.redaction } : {}),
  };
  const worker = spawnWorker(world);
  try {
    await startRun(worker.deps, { tenant: run.tenant, runId: run.runId, agent: options.agent.name, version: options.agent.version, input: read.input });
  } catch (error) {
    // The candidate refuses the recorded input (its schema changed, its instructions throw): a result, scored as such.
    if (!(error instanceof LogbookError)) throw error;
    return { side: notStarted(read.side, options.agent, { code: errorCode(error), message: errorMessage(error) }), calls };
  }
  const { head } = await driveRun(world, run, { worker: () => worker, outside: sendFollowUps(read.messages), maxIterations: options.maxIterations });
  const missingModel = head.attention.find((a) => a.reason === 'missing_model');
  if (missingModel) return { problem: { code: 'missing_model', message: `${missingModel.detail} (give the candidate's model in defineAgents({ models }))` } };
  return { side: await candidateSide(storage, run), calls };
}

/** Memory storage without a stream: an eval reads only the log, so nothing is streamed (or paced). */
function evalStorage(): WorldStorage {
  const { log, heads, inbox, blobs, queue, publisher } = memoryStorage();
  return { log, heads, inbox, blobs, queue, ...(publisher ? { publisher } : {}) };
}

function resolver(storage: WorldStorage) {
  return async (body: Body): Promise<JsonValue> =>
    body.kind === 'inline' ? body.value : decodeJson(await storage.blobs.get(body.key, { sha256: body.sha256 }));
}

/** The arguments the candidate's model asked for in call `<seq>-<index>`, as its log holds them (redacted). */
async function askedArgs(storage: WorldStorage, run: RunRef, callId: string): Promise<JsonValue> {
  const [seq, index] = callId.split('-').map(Number);
  const event = parseEvent(await storage.log.readOne(run, seq ?? 0));
  const call = event.type === 'model_response' ? event.calls[index ?? 0] : undefined;
  if (!call) throw new Error(`call ${callId} is not in the candidate's log`);
  return resolver(storage)(call.args);
}

async function candidateSide(storage: WorldStorage, run: RunRef): Promise<EvalSide> {
  const events = await readWholeLog(storage.log, run);
  return sideOf(events, foldLog(events), resolver(storage));
}

/** The recorded follow-ups, each sent once the candidate has completed its answer to the one before. */
function sendFollowUps(messages: readonly JsonValue[]): Outside {
  let next = 0;
  return async (head, deps) => {
    const input = messages[next];
    if (input === undefined || head.status !== 'completed') return false;
    next++;
    try {
      await requestMessage(deps, { tenant: head.tenant, runId: head.runId }, { input, messageId: `eval-${next}` }, 'eval');
      return true;
    } catch (error) {
      // A candidate that cannot take it (its budget is spent): the rest are not sent either.
      if (!(error instanceof LogbookError)) throw error;
      next = messages.length;
      return false;
    }
  };
}

function notStarted(recorded: EvalSide, agent: AgentDefinition, failure: { code: string; message: string }): EvalSide {
  return {
    runId: recorded.runId,
    agent: { name: agent.name, version: agent.version },
    promptVersion: agent.system.version,
    modelId: agent.model.id,
    status: 'not_started',
    failure,
    toolCalls: [],
    usage: { steps: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
  };
}
