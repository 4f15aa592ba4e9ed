import { reservationOf, parseEvent, type RunEvent } from '../../../lib/core/events.js';
import type { RunRef } from '../../../lib/core/run-ref.js';
import { opSpanName } from '../../../lib/engine/tracing/log-spans.js';
import { rootSpanIdOf, spanIdOf, stepSpanIdOf, traceIdOf } from '../../../lib/engine/tracing/trace-span.js';
import type { World } from 'logbook/testing';

/** A span as a receiver got it (OTLP JSON and protobuf decode to this), or as a tracer recorded it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

export async function logOf(world: World, run: RunRef): Promise<RunEvent[]> {
  return (await world.storage.log.read(run, { afterSeq: 0 })).events.map((e) => parseEvent(e));
}

/**
 * What the spans of one ended run must satisfy, whatever crashed on the way: one trace; every
 * parent received (no orphan); exactly one span per model call and per tool-call attempt (a span
 * sent twice after a crash keeps its id, name and parent: a collector keeps one); each call's span
 * under the step (lease epoch) that wrote its first event; one span per workflow operation (but a
 * recorded value), likewise; a step span for every epoch that wrote.
 */
export function traceFailures(spans: readonly ReceivedSpan[], log: readonly RunEvent[], run: RunRef): string[] {
  const failures: string[] = [];
  const byId = new Map<string, ReceivedSpan>();
  for (const s of spans) {
    if (s.traceId !== traceIdOf(run)) failures.push(`span ${s.name} in trace ${s.traceId}, not the run's ${traceIdOf(run)}`);
    const seen = byId.get(s.spanId);
    if (seen && (seen.name !== s.name || seen.parentSpanId !== s.parentSpanId)) {
      failures.push(`span ${s.spanId} sent twice as different spans: ${seen.name} under ${seen.parentSpanId} and ${s.name} under ${s.parentSpanId}`);
    }
    byId.set(s.spanId, s);
  }
  const root = byId.get(rootSpanIdOf(run));
  if (!root || root.parentSpanId !== undefined || !root.name.startsWith('invoke_agent ')) failures.push(`no root invoke_agent span (${root?.name})`);
  for (const s of byId.values()) {
    if (s.parentSpanId !== undefined && !byId.has(s.parentSpanId)) failures.push(`orphan: ${s.name} (${s.spanId}) under missing ${s.parentSpanId}`);
  }
  const parentOf = (e: RunEvent) => (e.by.epoch > 0 ? stepSpanIdOf(run, e.by.epoch) : rootSpanIdOf(run));
  // Model calls: one chat span per reservation (model_started, or carried by a tool_result).
  const modelIds = new Set<string>();
  for (const e of log) {
    if (!reservationOf(e)) continue;
    const id = spanIdOf(run, 'model', e.seq);
    modelIds.add(id);
    const s = byId.get(id);
    if (!s) failures.push(`no chat span for the model call reserved at seq ${e.seq}`);
    else if (!s.name.startsWith('chat ') || s.parentSpanId !== parentOf(e)) failures.push(`chat span of seq ${e.seq}: ${s.name} under ${s.parentSpanId}, want ${parentOf(e)}`);
  }
  // Tool calls: one span per attempt (tool_started).
  const toolIds = new Set<string>();
  for (const e of log) {
    if (e.type !== 'tool_started') continue;
    const id = spanIdOf(run, 'tool', e.callId, e.attempt);
    toolIds.add(id);
    const s = byId.get(id);
    if (!s) failures.push(`no span for attempt ${e.attempt} of call ${e.callId}`);
    else {
      if (s.parentSpanId !== parentOf(e)) failures.push(`span of ${e.callId}#${e.attempt} under ${s.parentSpanId}, want ${parentOf(e)}`);
      if (s.attributes['logbook.tool.attempt'] !== e.attempt || s.attributes['gen_ai.tool.call.id'] !== e.callId) failures.push(`span of ${e.callId}#${e.attempt} says ${JSON.stringify(s.attributes)}`);
    }
  }
  // Workflow operations (a recorded value excepted): one span each, under the step that wrote its first event.
  const opIds = new Set<string>();
  for (const e of log) {
    if (!e.type.startsWith('op_') || !('op' in e) || ['now', 'random', 'uuid'].includes(e.kind)) continue;
    const id = spanIdOf(run, 'op', e.op);
    if (opIds.has(id)) continue;
    opIds.add(id);
    const s = byId.get(id);
    if (!s) failures.push(`no span for operation ${e.op} (${e.kind} ${e.name})`);
    else {
      if (s.name !== opSpanName(e.kind, e.name)) failures.push(`span of operation ${e.op} named ${s.name}`);
      if (s.parentSpanId !== parentOf(e)) failures.push(`span of operation ${e.op} under ${s.parentSpanId}, want ${parentOf(e)}`);
      if (s.attributes['logbook.op.number'] !== e.op) failures.push(`span of operation ${e.op} says ${JSON.stringify(s.attributes)}`);
    }
  }
  for (const s of byId.values()) {
    if (s.name.startsWith('logbook.workflow.') && !opIds.has(s.spanId)) failures.push(`an operation span for no operation: ${s.name} ${s.spanId}`);
    if (s.name.startsWith('chat ') && !modelIds.has(s.spanId)) failures.push(`a chat span for no model call: ${s.spanId}`);
    if (/^(execute_tool|wait) /.test(s.name) && !toolIds.has(s.spanId)) failures.push(`a tool span for no attempt: ${s.name} ${s.spanId}`);
  }
  // Steps: every epoch that wrote has its step span, under the root.
  for (const epoch of new Set(log.map((e) => e.by.epoch).filter((e) => e > 0))) {
    const s = byId.get(stepSpanIdOf(run, epoch));
    if (!s || s.name !== 'logbook.step' || s.parentSpanId !== rootSpanIdOf(run)) failures.push(`no step span for epoch ${epoch}`);
  }
  return failures;
}
