import type { RunView } from '../../lib/api/schemas.js';
import { applyEvent, emptyProgress, progressLine, type RunProgress } from '../local/run-watch.js';
import type { LogbookClient } from './api-client.js';
import { describeEvent } from './event-text.js';
import type { Output } from './output.js';
import { formatUsd } from './table.js';
import { plural } from '../../lib/core/plural.js';

/** How a watched run ended, as `runs watch` and `runs start --watch` exit. 1 and 2 stay the CLI's. */
export const WATCH_EXIT_CODES = { completed: 0, failed: 3, cancelled: 4, parked: 5 } as const;

/** The API's long-poll limit: well inside API Gateway's 30 s. */
const MAX_WAIT_SECONDS = 20;

/** How long the final summary waits for the head to show what the events said (20 x 100 ms). */
const HEAD_CATCH_UP_TRIES = 20;
const HEAD_CATCH_UP_MS = 100;
const TERMINAL_EVENTS = new Set(['run_completed', 'run_failed', 'run_cancelled']);
const TERMINAL_STATUSES = new Set(['completed', 'failed', 'cancelled']);

/** One event as `npm start` prints it: seq, type, what it means. */
export function eventLine(event: Record<string, unknown>): string {
  return `  ${String(event.seq).padStart(3)} ${String(event.type).padEnd(18)} ${describeEvent(event)}`;
}

export interface FollowOptions {
  /** Print events after this seq only (default 0: the whole log). */
  after?: number;
  /** Keep watching a parked run until it completes, fails or is cancelled. */
  untilDone?: boolean;
  /** One JSON line per stream item (event, text, discard), then one JSON summary line. */
  json?: boolean;
  /** Raw writes for the live progress line (default stderr); used only when io.tty. */
  live?: (text: string) => void;
  /** Long-poll wait per request (default and maximum 20 s). */
  waitSeconds?: number;
}

/** Items a stream page holds at most: a full page is followed at once, without waiting. */
const STREAM_PAGE = 500;

/**
 * Follow a run through the API's stream (GET /runs/{id}/stream, long poll): print each event as
 * it lands and the answer text as the model writes it, keep a live progress line on a terminal,
 * and resolve to the exit code of how the run ended (WATCH_EXIT_CODES). A parked run ends the
 * watch (nothing happens without a person) unless `untilDone`.
 */
export async function followRun(client: LogbookClient, runId: string, io: Output, options: FollowOptions = {}): Promise<number> {
  // Phase 1: the run exists (a 404 is the CLI's exit 1) and who it is.
  let view = await client.getRun(runId);
  const progress = emptyProgress(runId);
  const toolNames = new Map<string, string>();
  const maxWait = Math.min(options.waitSeconds ?? MAX_WAIT_SECONDS, MAX_WAIT_SECONDS);
  const live = io.tty && !options.json ? (options.live ?? ((text: string) => void process.stderr.write(text))) : undefined;
  const status = new StatusLine(live);
  const text = new TextPrinter(io, status);
  // A seq to start after: no call is open there as far as this cursor says (its text is skipped).
  let cursor = options.after ? `${options.after}.0.0.-1` : undefined;
  let wait = maxWait;
  // Once caught up with the log, look at the head even if the events say nothing: a run parked
  // as poisoned or with a corrupt log has its park on the head only.
  let headChecked = false;
  // A workflow run is told by its operations (their op_* events print as lines like any other).
  let opsDone = 0;
  const workflow = view.kind === 'workflow';
  io.err(`watching ${runId} (${workflow ? 'workflow ' : ''}${view.agent.name}@${view.agent.version}, ${view.status}); Ctrl-C stops the watch, not the run`);

  // Phase 2: long-poll the stream; look at the head when it goes quiet or says the run stopped.
  for (;;) {
    const page = await client.stream(runId, cursor, STREAM_PAGE, wait);
    cursor = page.next;
    let events = 0;
    for (const item of page.items) {
      if (options.json) io.out(JSON.stringify(item));
      if (item.type === 'text') {
        if (!options.json) text.add(item.callSeq, item.text);
        continue;
      }
      if (item.type === 'discard') {
        if (!options.json) text.discard(item.callSeq);
        continue;
      }
      events++;
      text.end();
      status.clear();
      if (!options.json) io.out(eventLine(item.event));
      if (item.event.type === 'op_result') opsDone++;
      applyEvent(progress, item.event, toolNames);
    }
    if (events > 0 && !text.open) status.draw(progressLine(progress, toolNames));
    if (page.items.length >= STREAM_PAGE) continue;
    const ended = TERMINAL_EVENTS.has(progress.lastEvent ?? '');
    if (!ended && page.items.length > 0 && progress.status !== 'parked' && headChecked) continue;
    view = await client.getRun(runId);
    // The head is projected right after a step's last append: when the events say the run
    // ended, give it a moment, so the summary's usage and answer are the final ones.
    for (let i = 0; ended && view.status !== progress.status && i < HEAD_CATCH_UP_TRIES; i++) {
      await new Promise((done) => setTimeout(done, HEAD_CATCH_UP_MS));
      view = await client.getRun(runId);
    }
    headChecked = true;
    // The head is projected after a step's last append, so it may lag what the events said.
    const finalStatus = ended ? progress.status : view.status;
    if (TERMINAL_STATUSES.has(finalStatus) || (finalStatus === 'parked' && !options.untilDone)) {
      text.end();
      status.clear();
      return finish(io, { ...view, status: finalStatus as RunView['status'] }, progress, options.json === true, workflow ? opsDone : undefined);
    }
    // The events say parked but the head has not caught up: look again soon, not in 20 s.
    wait = progress.status === 'parked' && view.status !== 'parked' ? 1 : maxWait;
  }
}

/**
 * The answer text as it streams, between the event lines. With a raw writer (a real stdout) each
 * piece is written as it comes; without one (line output), each line as it completes. The
 * model_response event line that follows is the text as recorded.
 */
class TextPrinter {
  private call: number | undefined;
  private pending = '';
  constructor(
    private readonly io: Output,
    private readonly status: StatusLine,
  ) {}

  get open(): boolean {
    return this.call !== undefined;
  }

  add(callSeq: number, text: string): void {
    if (this.call !== callSeq) {
      this.end();
      this.status.clear();
      this.call = callSeq;
      this.write('      > ');
    }
    this.write(text);
  }

  /** An abandoned attempt: say so, its text is not the answer. */
  discard(callSeq: number): void {
    if (this.call !== callSeq) return;
    this.write(' [attempt abandoned: the call is retried]');
    this.end();
  }

  end(): void {
    if (this.call === undefined) return;
    this.call = undefined;
    if (this.io.write) this.io.write('\n');
    else if (this.pending !== '') this.io.out(this.pending);
    this.pending = '';
  }

  private write(text: string): void {
    // Streamed text is shown as text: control characters (terminal escapes) are made visible.
    const safe = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    if (this.io.write) {
      this.io.write(safe);
      return;
    }
    const lines = (this.pending + safe).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.io.out(line);
  }
}

/** Phase 3: how it ended, for people (stderr) or scripts (one JSON line on stdout). */
function finish(io: Output, view: RunView, progress: RunProgress, json: boolean, opsDone?: number): number {
  const code = WATCH_EXIT_CODES[view.status as keyof typeof WATCH_EXIT_CODES] ?? 1;
  if (json) {
    io.out(
      JSON.stringify({
        runId: view.runId,
        status: view.status,
        exitCode: code,
        usage: view.usage,
        result: view.result,
        ...(view.output !== undefined ? { output: view.output } : {}),
        failure: view.failure,
        attention: view.attention,
      }),
    );
    return code;
  }
  // A workflow's count is of operations with a result among the events watched (its child agents' turns are theirs).
  const work = opsDone !== undefined ? plural(opsDone, 'operation') : `${plural(progress.turns, 'turn')}, ${plural(progress.toolsDone, 'tool call')}`;
  io.err(
    `\nStatus: ${view.status} after ${work}, ` +
      `${view.usage.inputTokens} input + ${plural(view.usage.outputTokens, 'output token')} (${formatUsd(view.usage.costUsd)})`,
  );
  if (view.result !== undefined) io.err(`Answer: ${typeof view.result === 'string' ? view.result : JSON.stringify(view.result)}`);
  if (view.output !== undefined) io.err(`Output: ${JSON.stringify(view.output)}`);
  if (view.failure) io.err(`Failure: ${view.failure.code}: ${view.failure.message}`);
  for (const a of view.attention) io.err(`Needs attention: ${a.reason}${a.callId ? ` on ${a.callId}` : ''}: ${a.detail}`);
  if (view.status === 'parked') {
    const call = view.attention.find((a) => a.callId)?.callId;
    io.err(
      call
        ? `Resolve with: logbook runs resolve ${view.runId} --call ${call} --outcome succeeded|failed|rerun [--result JSON]`
        : `Resolve with: logbook runs resolve ${view.runId} --action retry|fail`,
    );
  }
  return code;
}

/** The one live line on a terminal, redrawn in place; event lines are printed above it. */
class StatusLine {
  private shown = false;
  constructor(private readonly write: ((text: string) => void) | undefined) {}
  draw(text: string): void {
    if (!this.write) return;
    this.write(`\r\x1b[2K${text}`);
    this.shown = true;
  }
  clear(): void {
    if (!this.write || !this.shown) return;
    this.write('\r\x1b[2K');
    this.shown = false;
  }
}
