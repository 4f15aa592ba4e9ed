/**
 * Issue 32: every closed set (policies, event types, model providers, run statuses, operation
 * kinds) is one zod schema, and each place that must handle every member of one is checked:
 * switches end in `unhandled(value: never)` (lib/core/unhandled.ts) or tables `satisfies
 * Record<Member, ...>`, so a new member is a compile error there (the type-level cases below), and
 * this test runs every member through fold, decide, the span projection and the inspector's and
 * CLI's event text, so a member that compiles but is not handled fails here. DEVELOPMENT.md's
 * recipes are checked too: every path they name exists, and every file this test finds handling a
 * closed set is named in the recipe for that set.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideStarted, type Action } from '../../../lib/core/decide.js';
import { CorruptLogError } from '../../../lib/core/errors.js';
import { eventSchema, policySchema, type EventDraft, type EventType, type Policy, type RunEvent } from '../../../lib/core/events.js';
import { applyEvent, foldLog } from '../../../lib/core/fold.js';
import { runStatusSchema } from '../../../lib/core/run-status.js';
import { unhandled } from '../../../lib/core/unhandled.js';
import { opKindSchema, OP_KINDS, type OpKind } from '../../../lib/core/workflow-events.js';
import { RunStatusSchema } from '../../../lib/api/schemas.js';
import { SpanProjector } from '../../../lib/engine/tracing/log-spans.js';
import { attachmentProblem, modelSettingsProblems } from '../../../lib/models/model-capabilities.js';
import { modelProviderSchema, parseModelId, type ModelProvider } from '../../../lib/models/model-selection.js';
import { RUN_STATUSES } from '../../../lib/ports/run-heads.js';
import type { LogEvent } from '../../../dev/ui/client/types.js';
import { describeEvent } from '../../../dev/cli/event-text.js';
import { eventSamples } from '../../fixtures/event-samples.js';
import { root, sources } from './import-graph.js';

/**
 * A file of the inspector's client. Its DOM-free functions run in Node, but its modules import
 * dom.ts, which only the client's own tsconfig (DOM types) type-checks: loaded here untyped.
 */
async function client<T>(file: string): Promise<T> {
  return (await import(join(root, 'dev/ui/client', file))) as T;
}

const EVENT_TYPES = eventSchema.options.map((o) => o.shape.type.value);
const by = { epoch: 1, nonce: 'n' };

function logged(draft: EventDraft, seq: number): RunEvent {
  return eventSchema.parse({ ...draft, v: 1, seq, at: 1000 * seq, by });
}

/** An agent run's run_started and a workflow run's (the sample is a workflow's). */
function starts(): RunEvent[] {
  const sample = eventSamples('x').run_started as Extract<EventDraft, { type: 'run_started' }>;
  const { workflow: _workflow, ...agent } = sample;
  return [logged(agent, 1), logged(sample, 1)];
}

/** Folding `event` after a run_started: a changed state, or a CorruptLogError (an order that cannot happen); never anything else. */
function foldOutcome(start: RunEvent, event: RunEvent): 'changed' | 'unchanged' | 'corrupt' {
  const state = foldLog([start]);
  const before = JSON.stringify({ ...state, lastSeq: 0 });
  try {
    applyEvent(state, event);
  } catch (err) {
    if (err instanceof CorruptLogError) return 'corrupt';
    throw err;
  }
  return JSON.stringify({ ...state, lastSeq: 0 }) === before ? 'unchanged' : 'changed';
}

describe('event types', () => {
  const samples = eventSamples('x');

  it(`every event type (${EVENT_TYPES.length}) has a sample, and folding each changes the state or is refused as corrupt`, () => {
    expect(Object.keys(samples).sort()).toEqual([...EVENT_TYPES].sort());
    const silent: string[] = [];
    let changed = 0;
    for (const type of EVENT_TYPES) {
      if (type === 'run_started') continue;
      const outcomes = starts().map((start) => foldOutcome(start, logged(samples[type], 2)));
      if (outcomes.includes('unchanged')) silent.push(type);
      if (outcomes.includes('changed')) changed++;
    }
    // An event the fold forgets would leave the state as it was: none may.
    expect(silent).toEqual([]);
    // The rest need earlier events (a call, an operation) and are refused as corrupt after a bare start.
    expect(changed).toBeGreaterThan(0);
  });

  it('a second run_started is refused (the fold handles it, as corruption)', () => {
    const [agent] = starts();
    expect(foldOutcome(agent as RunEvent, logged(samples.run_started, 2))).toBe('corrupt');
  });

  it('the span projection takes every event type', () => {
    for (const start of starts()) {
      const state = foldLog([start]);
      const projector = new SpanProjector({
        run: { tenant: 't', runId: 'r-1' },
        started: state.started,
        calls: () => state.calls,
        payloads: true,
      });
      projector.feed([start], false);
      for (const type of EVENT_TYPES) expect(() => projector.feed([logged(samples[type], 2)], true, 1), type).not.toThrow();
    }
  });

  /**
   * Event types with no one-line text of their own: the inspector shows them in other columns
   * (the tool call column, the conversation). A new event type is in
   * neither this list nor the renderers: describe it (dev/ui/client/timeline.ts,
   * dev/cli/event-text.ts) or list it here with where it is shown.
   */
  const NO_INSPECTOR_TEXT = new Set<EventType>([
    'tool_started', // the tool call column (policy, attempt, not after)
    'run_completed', // the result column
    'approval_requested', // the conversation's approval card
    'approval_decided',
    'user_message', // the conversation
  ]);
  const NO_CLI_TEXT = new Set<EventType>([]);

  it("the inspector's timeline describes every event type but those it shows elsewhere", async () => {
    const { describe: describeRow } = await client<{ describe: (e: LogEvent) => string }>('timeline.ts');
    const blank = EVENT_TYPES.filter((type) => describeRow(logged(samples[type], 2) as unknown as LogEvent) === '');
    expect(blank.sort()).toEqual([...NO_INSPECTOR_TEXT].sort());
  });

  it("the CLI's event text describes every event type", () => {
    const blank = EVENT_TYPES.filter((type) => describeEvent(logged(samples[type], 2) as unknown as Record<string, unknown>) === '');
    expect(blank.sort()).toEqual([...NO_CLI_TEXT].sort());
  });
});

describe('policies', () => {
  const ctx = { maxToolAttempts: 3, maxCrashedToolAttempts: 3 };

  it(`decideStarted has an answer for every policy (${policySchema.options.length}): one start, look or attention`, () => {
    for (const policy of policySchema.options) {
      const out = { starts: [] as { callId: string; attempt: number }[], attentions: [] as Action[], verifies: [] as string[], pinnedOk: true };
      decideStarted({ callId: '2-0', name: 'write', attempt: 1 }, policy, ctx, out);
      expect(out.starts.length + out.attentions.length + out.verifies.length, policy).toBe(1);
    }
  });

  it('the inspector says what every policy does (its client keeps its own table: it imports nothing of lib/)', async () => {
    const { POLICY_EFFECT } = await client<{ POLICY_EFFECT: Record<string, string> }>('pending.ts');
    expect(Object.keys(POLICY_EFFECT).sort()).toEqual([...policySchema.options].sort());
  });

  it('a policy outside the schema is refused at run time too (it can only arrive by bypassing the schema)', () => {
    const out = { starts: [], attentions: [], verifies: [], pinnedOk: true };
    expect(() => decideStarted({ callId: '2-0', name: 'write', attempt: 1 }, 'retry' as Policy, ctx, out)).toThrow(/unhandled policy: "retry"/);
  });
});

describe('model providers, run statuses, operation kinds', () => {
  it(`every provider (${modelProviderSchema.options.length}) parses and has settings and attachment rules`, () => {
    for (const provider of modelProviderSchema.options) {
      expect(parseModelId(`${provider}:m`)).toEqual({ provider, name: 'm' });
      expect(() => modelSettingsProblems(`${provider}:m`, {}, { tools: 0, maxOutputTokens: 64 })).not.toThrow();
      expect(() => attachmentProblem(`${provider}:m`, 'image/png')).not.toThrow();
    }
    expect(parseModelId('vertex:m')).toBeUndefined();
  });

  it("run statuses are one list: the ports', the API's and the schema's", () => {
    expect(RUN_STATUSES).toEqual(runStatusSchema.options);
    expect(RunStatusSchema.options).toEqual(runStatusSchema.options);
  });

  it('operation kinds are one list', () => {
    expect(opKindSchema.options).toEqual([...OP_KINDS]);
  });
});

/** Type level: checked by `npm run typecheck`, which includes test/. */
describe('a member not handled is a compile error', () => {
  it('a switch ending in unhandled() does not compile when a member has no case', () => {
    const kinds = (p: Policy | 'new_policy'): string => {
      switch (p) {
        case 'rerun':
        case 'idempotency_key':
        case 'verify':
        case 'escalate':
          return p;
        default:
          // @ts-expect-error 'new_policy' is not assignable to never: the new member needs a case
          return unhandled(p, 'policy');
      }
    };
    expect(() => kinds('new_policy')).toThrow(/unhandled policy/);
  });

  it('a table that satisfies Record<Member, ...> does not compile when a member is missing', () => {
    const texts = {
      rerun: 'a',
      idempotency_key: 'b',
      verify: 'c',
      // @ts-expect-error escalate is missing from a Record<Policy, string>
    } satisfies Record<Policy, string>;
    const providers = { scripted: 1, bedrock: 2, openai: 3 } satisfies Record<ModelProvider, number>;
    const ops = Object.fromEntries(OP_KINDS.map((k) => [k, k])) as Record<OpKind, string>;
    expect([Object.keys(texts).length, Object.keys(providers).length, Object.keys(ops).length]).toEqual([
      3,
      modelProviderSchema.options.length,
      OP_KINDS.length,
    ]);
  });
});

/** DEVELOPMENT.md's recipe under `heading`: its text up to the next heading. */
function recipe(heading: string): string {
  const doc = readFileSync(join(root, 'DEVELOPMENT.md'), 'utf8');
  const start = doc.indexOf(`\n## ${heading}\n`);
  expect(start, `DEVELOPMENT.md has "## ${heading}"`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

function namedPaths(text: string): string[] {
  return [...text.matchAll(/`((?:lib|dev|test|docs|functions|examples)\/[\w./-]+\.(?:ts|md))`/g)].map((m) => m[1] as string);
}

/** Files of lib/ and dev/ whose text matches `pattern` (the places that handle a closed set). */
function handlers(pattern: RegExp): string[] {
  const files = [...sources(join(root, 'lib')), ...sources(join(root, 'dev'))];
  return files.filter((f) => pattern.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
}

const RECIPES: { heading: string; handles: RegExp }[] = [
  { heading: 'Adding a tool policy', handles: /unhandled\([^)]*'policy'\)|Record<Policy,|policySchema\.options|\bidempotency_key: '/ },
  { heading: 'Adding an event type', handles: /unhandled\([^)]*'(event type|operation event)'\)|: never = e\b|switch \(e\.type\)|Record<EventType,/ },
  { heading: 'Adding a model provider', handles: /unhandled\([^)]*'model provider'\)|modelProviderSchema\b/ },
];

describe('DEVELOPMENT.md recipes name every file a new member touches', () => {
  it('sources() sees lib/ and dev/', () => {
    expect(readdirSync(join(root, 'lib')).length).toBeGreaterThan(0);
    expect(handlers(/unhandled\(/).length).toBeGreaterThan(3);
  });

  for (const { heading, handles } of RECIPES) {
    it(`"${heading}": every path it names exists, and it names every file that handles the set`, () => {
      const text = recipe(heading);
      const named = namedPaths(text);
      expect(named.length).toBeGreaterThan(2);
      expect(named.filter((p) => !existsSync(join(root, p)))).toEqual([]);
      const found = handlers(handles);
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((f) => !named.includes(f))).toEqual([]);
    });
  }
});
