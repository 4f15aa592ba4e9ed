import type { AgentRegistry } from '../authoring/registry.js';
import { RunNotFoundError } from '../core/errors.js';
import { opCallId } from '../core/workflow-events.js';
import type { OpState } from '../core/workflow-state.js';
import type { RunRef } from '../core/run-ref.js';
import { NotWorkflowRunError } from '../engine/control-errors.js';
import type { EngineDeps } from '../engine/engine.js';
import { RunLoader } from '../engine/run-loader.js';
import { bodyValue } from './run-views.js';
import type { OperationPage, OperationView, WorkflowList } from './workflow-schemas.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Every registered workflow with its versions (registration order) and their input and output JSON Schemas. */
export function workflowList(registry: AgentRegistry): WorkflowList {
  return {
    workflows: registry.workflowNames().map((name) => {
      const versions = registry.workflows().filter((w) => w.name === name);
      return {
        workflow: name,
        latest: registry.workflow(name)?.version ?? versions[versions.length - 1]?.version ?? '',
        versions: versions.map((w) => ({
          version: w.version,
          input: w.inputSchema ? { jsonSchema: w.inputSchema.jsonSchema, sha256: w.inputSchema.sha256 } : null,
          output: w.pinnedOutput ? { jsonSchema: w.pinnedOutput.schema, sha256: w.pinnedOutput.schemaHash } : null,
          ...(w.description ? { description: w.description } : {}),
        })),
      };
    }),
  };
}

/** One operation as the API shows it, from the run's fold state. */
export function operationView(op: OpState): OperationView {
  const result = op.result;
  const status = result ? (result.ok ? 'succeeded' : 'failed') : op.status === 'retrying' ? 'retrying' : 'started';
  const wait = op.wait;
  const failure = result && !result.ok ? failureOf(result.output, result.errorCode) : op.lastError;
  return {
    op: op.op,
    callId: opCallId(op.op),
    kind: op.kind,
    name: op.name,
    status,
    seq: op.seq,
    attempt: op.attempt,
    ...(op.policy ? { policy: op.policy } : {}),
    ...(op.startedAt !== undefined ? { startedAt: iso(op.startedAt) } : {}),
    ...(op.endedAt !== undefined ? { endedAt: iso(op.endedAt) } : {}),
    ...(!result && op.notAfter !== undefined ? { deadline: iso(op.notAfter) } : {}),
    ...(op.status === 'retrying' && op.retryAt !== undefined ? { retryAt: iso(op.retryAt) } : {}),
    ...(wait && !result
      ? {
          waitsFor: {
            kind: wait.kind,
            ...(wait.kind === 'signal' ? { signal: wait.signal } : {}),
            ...(wait.kind === 'approval' ? { argsHash: wait.argsHash } : {}),
          },
        }
      : {}),
    ...(wait?.kind === 'child' ? { child: { runId: wait.runId, ...wait.definition } } : {}),
    ...(result ? { source: result.source } : {}),
    ...(result?.sentBy ? { sentBy: result.sentBy } : {}),
    ...(result?.ok && !result.void ? { result: bodyValue(result.output) } : {}),
    ...(failure ? { error: failure } : {}),
  };
}

/** A failed result's `{error, message}` (as a step's error is recorded), or its code alone. */
function failureOf(output: NonNullable<OpState['result']>['output'], errorCode: string | undefined): { code: string; message: string } {
  const value = output.kind === 'inline' && output.value !== null && typeof output.value === 'object' ? (output.value as Record<string, unknown>) : {};
  const code = typeof value.error === 'string' ? value.error : (errorCode ?? 'failed');
  const message = typeof value.message === 'string' ? value.message : output.kind === 'blob' ? (output.summary ?? code) : code;
  return { code, message };
}

/**
 * A page of a workflow run's operations, from its state (the latest snapshot and the events after
 * it, as a worker loads it: the reads stay flat however long the run). An agent run has none:
 * NotWorkflowRunError (409).
 */
export async function operationsPage(
  deps: Pick<EngineDeps, 'log' | 'heads' | 'blobs'>,
  run: RunRef,
  query: { after: number; limit: number },
): Promise<OperationPage> {
  const head = await deps.heads.getHead(run);
  if (!head) throw new RunNotFoundError(run);
  // A loader of its own: the API's read leaves no state in the worker's cache.
  const { state } = await new RunLoader(deps).load(run, head);
  const workflow = state.workflow;
  if (!workflow) throw new NotWorkflowRunError(run.runId, 'it has no operations (GET /runs/{id}/events lists its calls)');
  const ops = workflow.ops.slice(query.after, query.after + query.limit).filter((op): op is OpState => op !== null);
  const last = query.after + query.limit;
  return {
    runId: run.runId,
    workflow: { ...state.started.agent },
    operations: ops.map(operationView),
    ...(last < workflow.ops.length ? { next: last } : {}),
  };
}
