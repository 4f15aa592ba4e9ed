import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { OtlpHistogramPoint, OtlpSpan } from './otlp-receiver.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = import.meta.resolve('tsx');

export interface Child {
  process: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | string | null>;
  stop(): Promise<void>;
}

/**
 * A Logbook entry point (repo-relative TypeScript) as its own process, run as `npm start` and the
 * `logbook` command run it here (the sources, through tsx), in `cwd`, with the environment of the
 * test minus any OTEL_* variable, plus `env`: so the variables a test sets are the only ones.
 */
export function spawnEntry(entry: string, args: string[], cwd: string, env: Record<string, string>): Child {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_') && !k.startsWith('LOGBOOK_')));
  const child = spawn(process.execPath, ['--conditions=logbook-source', '--import', TSX, `${ROOT}${entry}`, ...args], {
    cwd,
    env: { ...base, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return {
    process: child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Spans whose parent is not among them (a trace must have none once its root arrived). */
export function orphans(spans: readonly OtlpSpan[]): string[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => s.parentSpanId !== undefined && !ids.has(s.parentSpanId)).map((s) => `${s.name} under ${s.parentSpanId}`);
}

/**
 * What a backend makes of cumulative histogram points: the latest point of each stream (one
 * per process, told apart by service.instance.id, and per attribute set), summed across streams.
 */
export function tokenTotals(points: readonly OtlpHistogramPoint[]): { input: number; output: number; calls: number } {
  const latest = new Map<string, OtlpHistogramPoint>();
  for (const p of points) {
    const stream = `${p.name}|${String(p.resource['service.instance.id'])}|${JSON.stringify(Object.entries(p.attributes).sort())}`;
    const seen = latest.get(stream);
    if (!seen || p.count >= seen.count) latest.set(stream, p);
  }
  const totals = { input: 0, output: 0, calls: 0 };
  for (const p of latest.values()) {
    if (p.name === 'gen_ai.client.token.usage' && p.attributes['gen_ai.token.type'] === 'input') totals.input += p.sum;
    if (p.name === 'gen_ai.client.token.usage' && p.attributes['gen_ai.token.type'] === 'output') totals.output += p.sum;
    if (p.name === 'gen_ai.client.operation.duration') totals.calls += p.count;
  }
  return totals;
}
