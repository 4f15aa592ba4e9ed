import { truncate } from './table.js';
import { plural } from '../../lib/core/plural.js';

type Event = Record<string, unknown>;

function bodyText(body: unknown, max = 60): string {
  if (!body || typeof body !== 'object') return '';
  const b = body as { kind?: string; value?: unknown; summary?: string; size?: number };
  if (b.kind === 'blob') return `[blob ${b.size ?? '?'} B] ${truncate(b.summary ?? '', max)}`;
  const value = typeof b.value === 'string' ? b.value : JSON.stringify(b.value);
  return truncate(value ?? '', max);
}

/** One line saying what an event means, for the `runs events` table. */
export function describeEvent(e: Event): string {
  switch (e.type) {
    case 'run_started': {
      const agent = e.agent as { name?: string; version?: string } | undefined;
      const model = e.model as { id?: string } | undefined;
      // A workflow run pins no model.
      return `${agent?.name}@${agent?.version}${model?.id ? ` on ${model.id}` : ''}: ${bodyText(e.input)}`;
    }
    case 'model_started': {
      // A context policy's summary call (purpose summary) says which turns it will replace.
      const covers = e.purpose === 'summary' ? `, summary of turns 1-${String((e.covers as { turns?: number } | undefined)?.turns)}` : '';
      return `step ${String(e.step)}${covers}, up to ${plural(Number(e.maxOutputTokens), 'output token')} reserved`;
    }
    case 'model_response': {
      const calls = (e.calls as { callId: string; name: string }[] | undefined) ?? [];
      const usage = e.usage as { inputTokens?: number; outputTokens?: number } | undefined;
      const said = e.purpose === 'summary' ? `summary: ${bodyText(e.text)}` : `says ${bodyText(e.text)}`;
      const what = calls.length > 0 ? `calls ${calls.map((c) => `${c.name}(${c.callId})`).join(', ')}` : said;
      return `${what}; ${usage?.inputTokens ?? 0}+${usage?.outputTokens ?? 0} ${(usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0) === 1 ? 'token' : 'tokens'}`;
    }
    case 'model_failed':
      return `${String(e.code)}${e.retryable ? ' (retryable)' : ''}`;
    case 'tool_started': {
      const wait = e.wait as { kind?: string; signal?: string; runId?: string; until?: number } | undefined;
      const until = wait?.until ? new Date(wait.until).toISOString() : '';
      const what = wait?.kind === 'signal' ? `signal ${wait.signal}` : wait?.kind === 'child' ? `child run ${wait.runId}` : 'a timer';
      const waits = wait ? `; waits for ${what} until ${until}` : '';
      return `${String(e.callId)} attempt ${String(e.attempt)}${waits}`;
    }
    case 'approval_requested':
      return `${String(e.callId)} awaits approval (args ${String(e.argsHash).slice(0, 12)})`;
    case 'approval_decided':
      return `${String(e.decision)} ${String(e.callId)} by ${String(e.decidedBy)}${e.comment ? `: ${truncate(String(e.comment), 50)}` : ''}`;
    case 'user_message':
      return `from ${String(e.sentBy)}: ${bodyText(e.input)}`;
    case 'tool_result': {
      // The turn's last result may carry the next model call's reservation (it stands for a model_started).
      const reservation = e.reservation as { step?: number; maxOutputTokens?: number } | undefined;
      const reserves = reservation ? `; step ${String(reservation.step)}, up to ${plural(Number(reservation.maxOutputTokens), 'output token')} reserved` : '';
      return `${String(e.callId)} ${e.ok ? 'ok' : `error ${String(e.errorCode ?? '')}`} from ${String(e.source)}: ${bodyText(e.output, 40)}${reserves}`;
    }
    case 'tool_verified':
      return `${String(e.callId)} ${String(e.status)}`;
    case 'attention_required':
      return `${String(e.reason)}${e.callId ? ` on ${String(e.callId)}` : ''}: ${truncate(String(e.detail ?? ''), 60)}`;
    case 'attention_resolved':
      return `${String(e.outcome)}${e.callId ? ` for ${String(e.callId)}` : ''} by ${String(e.resolvedBy)}`;
    case 'cancel_requested':
      return `by ${String(e.requestedBy)}${e.reason ? `: ${String(e.reason)}` : ''}`;
    case 'run_completed':
      return bodyText(e.answer, 80);
    case 'run_failed':
      return `${String(e.code)}: ${truncate(String(e.message ?? ''), 60)}`;
    case 'run_cancelled': {
      const unresolved = (e.unresolved as string[] | undefined) ?? [];
      return unresolved.length > 0 ? `unresolved: ${unresolved.join(', ')}` : 'nothing unresolved';
    }
    case 'op_started':
    case 'op_result':
    case 'op_retry':
    case 'op_verified':
      return opText(e);
    default:
      return '';
  }
}

const isoOf = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : '?');

/**
 * A workflow operation's event: `op 3 step charge started (rerun)`, `op 2 signal manager-approved
 * started; waits for signal manager-approved until ...`, `op 1 step load order succeeded from step: 90000`.
 */
function opText(e: Event): string {
  // A sleep or a value is named by its kind: said once (`op 4 sleep started`).
  const name = e.name === e.kind ? '' : ` ${truncate(String(e.name), 60)}`;
  const op = `op ${String(e.op)} ${String(e.kind)}${name}`;
  switch (e.type) {
    case 'op_started': {
      const attempt = typeof e.attempt === 'number' && e.attempt > 1 ? `, attempt ${e.attempt}` : '';
      const policy = e.policy ? ` (${String(e.policy)})` : '';
      return `${op} started${attempt}${policy}${opWaitText(e.wait)}`;
    }
    case 'op_result': {
      const by = e.sentBy ? ` by ${truncate(String(e.sentBy), 40)}` : '';
      const code = e.errorCode ? ` ${String(e.errorCode)}` : '';
      const value = e.void ? '' : `: ${bodyText(e.output, 60)}`;
      return `${op} ${e.ok ? 'succeeded' : `failed${code}`} from ${String(e.source)}${by}${value}`;
    }
    case 'op_retry': {
      const error = e.error as { code?: string; message?: string } | undefined;
      return `${op} attempt ${String(e.attempt)} failed (${String(error?.code)}: ${truncate(String(error?.message ?? ''), 60)}); next attempt at ${isoOf(e.retryAt)}`;
    }
    default:
      return `${op} verified: ${String(e.status)}`;
  }
}

function opWaitText(wait: unknown): string {
  if (!wait || typeof wait !== 'object') return '';
  const w = wait as {
    kind?: string;
    signal?: string;
    until?: number;
    runId?: string;
    definition?: { kind?: string; name?: string; version?: string };
    argsHash?: string;
  };
  switch (w.kind) {
    case 'timer':
      return `; sleeps until ${isoOf(w.until)}`;
    case 'signal':
      return `; waits for signal ${String(w.signal)} until ${isoOf(w.until)}`;
    case 'child':
      return `; child run ${String(w.runId)} (${String(w.definition?.kind)} ${String(w.definition?.name)}@${String(w.definition?.version)})`;
    case 'approval':
      return `; awaits approval (args ${String(w.argsHash).slice(0, 12)})${w.until ? ` until ${isoOf(w.until)}` : ''}`;
    default:
      return '';
  }
}
