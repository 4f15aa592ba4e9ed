import type { LogbookClient } from '../cli/api-client.js';
import type { RunView } from '../../lib/api/schemas.js';

export const SETTLED = new Set(['completed', 'failed', 'cancelled', 'parked']);

/** What a person watching a run wants to see, folded from its events as they land. */
export interface RunProgress {
  runId: string;
  status: string;
  lastSeq: number;
  turns: number;
  toolsStarted: number;
  toolsDone: number;
  inputTokens: number;
  outputTokens: number;
  /** Tools running now (started, no result yet). */
  running: string[];
  lastEvent?: string;
}

export function emptyProgress(runId: string): RunProgress {
  return { runId, status: 'running', lastSeq: 0, turns: 0, toolsStarted: 0, toolsDone: 0, inputTokens: 0, outputTokens: 0, running: [] };
}

/** Fold one API event into the progress view. */
export function applyEvent(p: RunProgress, e: Record<string, unknown>, toolNames: Map<string, string>): void {
  p.lastSeq = Math.max(p.lastSeq, Number(e.seq ?? 0));
  p.lastEvent = String(e.type);
  switch (e.type) {
    case 'model_response': {
      p.turns++;
      const usage = e.usage as { inputTokens?: number; outputTokens?: number } | undefined;
      p.inputTokens += usage?.inputTokens ?? 0;
      p.outputTokens += usage?.outputTokens ?? 0;
      for (const c of (e.calls as { callId: string; name: string }[] | undefined) ?? []) toolNames.set(c.callId, c.name);
      break;
    }
    case 'tool_started':
      p.toolsStarted++;
      p.running = [...new Set([...p.running, String(e.callId)])];
      break;
    case 'tool_result':
      p.toolsDone++;
      p.running = p.running.filter((c) => c !== e.callId);
      break;
    case 'run_completed':
      p.status = 'completed';
      break;
    case 'run_failed':
      p.status = 'failed';
      break;
    case 'run_cancelled':
      p.status = 'cancelled';
      break;
    case 'attention_required':
      p.status = 'parked';
      break;
    case 'attention_resolved':
      p.status = 'running';
      break;
    default:
  }
}

export function progressLine(p: RunProgress, toolNames: Map<string, string>): string {
  const running = p.running.map((c) => `${toolNames.get(c) ?? '?'}(${c})`).join(', ');
  return (
    `${p.runId}  ${p.status.padEnd(9)} turn ${p.turns}  tools ${p.toolsDone}/${p.toolsStarted}` +
    `  tokens ${p.inputTokens} in / ${p.outputTokens} out  seq ${p.lastSeq}` +
    (running ? `  running: ${running}` : '')
  );
}

export interface WatchOptions {
  pollMs?: number;
  timeoutMs?: number;
  /** Called with each new event and the updated progress. */
  onEvent?: (event: Record<string, unknown>, progress: RunProgress, toolNames: Map<string, string>) => void;
  /** Stop when the run reaches one of these statuses (default: completed, failed, cancelled, parked). */
  until?: Set<string>;
  signal?: AbortSignal;
}

/** Follow a run through the API until it settles; resolves with its final view. */
export async function watchRun(client: LogbookClient, runId: string, options: WatchOptions = {}): Promise<{ view: RunView; progress: RunProgress }> {
  const progress = emptyProgress(runId);
  const toolNames = new Map<string, string>();
  const until = options.until ?? SETTLED;
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  for (;;) {
    const page = await client.events(runId, progress.lastSeq, 500);
    for (const e of page.events) {
      applyEvent(progress, e, toolNames);
      options.onEvent?.(e, progress, toolNames);
    }
    const view = await client.getRun(runId);
    progress.status = view.status;
    if (until.has(view.status) && page.next === undefined) return { view, progress };
    if (Date.now() > deadline) throw new Error(`run ${runId} did not settle in time (status ${view.status})`);
    if (options.signal?.aborted) throw options.signal.reason;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
  }
}
