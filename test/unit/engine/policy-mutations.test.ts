// Mutation checks for the side-effect policies: each mutation below changes one branch of the
// started-no-result decision (lib/core/decide.ts) or of the code that applies it (fold.ts,
// tool-runner.ts) so that a situation takes another situation's action. The policy table
// (policy-table.ts) must fail for every one of them, at the rows named. A mutant is the source
// file with one exact text replaced, loaded in place of the real module (vi.doMock) for a fresh
// copy of the engine; the real file is never touched.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const work = mkdtempSync(join(tmpdir(), 'policy-mutants-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Mutation {
  name: string;
  /** Under lib/. */
  file: string;
  /** Exact texts of the file, each found once, and what each becomes. */
  edits: [from: string, to: string][];
  /** Rows of the policy table that must fail under this mutation (others may fail too). */
  caughtBy: string[];
}

const MUTATIONS: Mutation[] = [
  // decide.ts: the started-no-result decision.
  {
    name: 'exhausted rerun runs again',
    file: 'core/decide.ts',
    edits: [['if (crashed >= (ctx.maxCrashedToolAttempts ?? ctx.maxToolAttempts)) {', 'if (false) {']],
    caughtBy: ['rerun, crashed starts exhausted: parks, no start, no error result'],
  },
  {
    name: 'rerun crash limit off by one',
    file: 'core/decide.ts',
    edits: [['if (crashed >= (ctx.maxCrashedToolAttempts ?? ctx.maxToolAttempts)) {', 'if (crashed > (ctx.maxCrashedToolAttempts ?? ctx.maxToolAttempts)) {']],
    caughtBy: ['rerun, crashed starts exhausted: parks, no start, no error result'],
  },
  {
    name: "rerun's crash limit is the keyed writes' attempt limit",
    file: 'core/decide.ts',
    edits: [['if (crashed >= (ctx.maxCrashedToolAttempts ?? ctx.maxToolAttempts)) {', 'if (crashed >= ctx.maxToolAttempts) {']],
    caughtBy: ['rerun, one crashed start left: runs the last time'],
  },
  {
    name: "a person's rerun does not give a read a fresh crash budget",
    file: 'core/decide.ts',
    edits: [['const crashed = call.attempt - (call.rerunFrom ?? 0);', 'const crashed = call.attempt;']],
    caughtBy: ["rerun, exhausted, a person's rerun dies too: a fresh crash budget, runs again"],
  },
  {
    name: 'exhausted keyed write runs again',
    file: 'core/decide.ts',
    edits: [['if (call.attempt >= ctx.maxToolAttempts) {', 'if (false) {']],
    caughtBy: ['idempotency_key, attempts exhausted: parks, no start, no result', 'approved idempotency_key call, attempts exhausted: parks'],
  },
  {
    name: 'keyed write attempt limit off by one',
    file: 'core/decide.ts',
    edits: [['if (call.attempt >= ctx.maxToolAttempts) {', 'if (call.attempt > ctx.maxToolAttempts) {']],
    caughtBy: ['idempotency_key, attempts exhausted: parks, no start, no result'],
  },
  {
    name: 'rerun and idempotency_key branches swapped',
    file: 'core/decide.ts',
    edits: [
      ["case 'rerun': {", "case 'idempotency_key_': {"],
      ["case 'idempotency_key':\n", "case 'rerun':\n"],
      ["case 'idempotency_key_': {", "case 'idempotency_key': {"],
    ],
    caughtBy: ['rerun, one crashed start left: runs the last time', 'idempotency_key, attempts exhausted: parks, no start, no result'],
  },
  {
    name: 'verify unknown runs again',
    file: 'core/decide.ts',
    edits: [["call.verified === 'not_landed' && call.attempt", "call.verified !== 'landed' && call.attempt"]],
    caughtBy: ['verify, unknown: parks, no start, no result', 'verify, verify() threw: unknown, parks', 'verify, verify() timed out: unknown, parks'],
  },
  {
    name: 'verify not landed escalates, landed runs again',
    file: 'core/decide.ts',
    edits: [["call.verified === 'not_landed' && call.attempt", "call.verified === 'landed' && call.attempt"]],
    caughtBy: ['verify, not landed: runs again', 'approved verify call, not landed: runs again, no new approval asked'],
  },
  {
    name: 'a call verify() saw land, whose result a crash lost, parks instead of being looked at again',
    file: 'core/decide.ts',
    edits: [["if (call.verified === undefined || (call.verified === 'landed' && (call.landedLooks ?? 0) < 2)) out.verifies.push(callId);", 'if (call.verified === undefined) out.verifies.push(callId);']],
    caughtBy: ['verify, landed, died before the result verify() carries was written: looks again, its result, no start'],
  },
  {
    name: 'a call whose landed result keeps being lost is looked at forever',
    file: 'core/decide.ts',
    edits: [["(call.landedLooks ?? 0) < 2", '(call.landedLooks ?? 0) < 3']],
    caughtBy: ['verify, landed, its result lost twice: parks, no third look, no start'],
  },
  {
    name: "verify's reruns unbounded",
    file: 'core/decide.ts',
    edits: [['call.attempt < ctx.maxToolAttempts && out.pinnedOk', 'out.pinnedOk']],
    caughtBy: ['verify, not landed, attempts exhausted: parks, no start'],
  },
  {
    name: "verify's attempt limit off by one",
    file: 'core/decide.ts',
    edits: [['call.attempt < ctx.maxToolAttempts && out.pinnedOk', 'call.attempt <= ctx.maxToolAttempts && out.pinnedOk']],
    caughtBy: ['verify, not landed, attempts exhausted: parks, no start'],
  },
  {
    name: 'escalate runs again',
    file: 'core/decide.ts',
    edits: [["    case 'escalate':\n      out.attentions.push({", "    case 'escalate':\n      out.starts.push({ callId, attempt: call.attempt + 1 });\n      return;\n      out.attentions.push({"]],
    caughtBy: ['escalate: parks, no start, no result', 'approved escalate call: parks, no start'],
  },
  {
    name: "a person's rerun is ignored",
    file: 'core/decide.ts',
    edits: [['if (call.rerunApproved && !cancelling) {', 'if (false) {']],
    caughtBy: ['escalate, a person answers rerun: one more start', 'verify, unknown, a person answers rerun: runs again without looking again'],
  },
  {
    name: 'policies apply before notAfter + grace',
    file: 'core/decide.ts',
    edits: [['if (ctx.now < readyAt) {', 'if (false) {']],
    caughtBy: ['rerun, before notAfter + grace: waits, no start, no look, no park', 'idempotency_key, before notAfter + grace: waits, no start, no look, no park', 'verify, before notAfter + grace: waits, no start, no look, no park', 'escalate, before notAfter + grace: waits, no start, no look, no park'],
  },
  {
    name: 'a cancelled keyed write is not left unresolved',
    file: 'core/decide.ts',
    edits: [["if (policy === 'idempotency_key') unresolved.push(callId);", '']],
    caughtBy: ['idempotency_key, a cancel arrives: left unresolved (it may land), no start'],
  },
  {
    name: 'a cancelled read is not abandoned',
    file: 'core/decide.ts',
    edits: [["if (cancelling && (policy === 'rerun' || policy === 'idempotency_key')) {", 'if (false) {']],
    caughtBy: ['rerun, a cancel arrives: abandoned, nothing unresolved, no start'],
  },
  {
    name: 'a cancel lets the started call be decided (verified) instead of left unresolved',
    file: 'core/decide.ts',
    edits: [['    if (cancelling) {\n      unresolved.push(callId);\n      continue;\n    }\n', '']],
    caughtBy: ['verify, a cancel arrives: left unresolved, not verified, no start', 'escalate, a cancel arrives: left unresolved, no start'],
  },
  {
    name: 'the verify action is dropped',
    file: 'core/decide.ts',
    edits: [["if (verifies[0] !== undefined) return { kind: 'verify', callId: verifies[0] };", '']],
    caughtBy: ['verify, landed: its result from verify(), no start', 'verify, not landed: runs again'],
  },
  // fold.ts: what a person's answer and a new start record.
  {
    name: "a person's failed is recorded as succeeded",
    file: 'core/fold.ts',
    edits: [["ok: e.outcome === 'succeeded'", 'ok: true']],
    caughtBy: ['escalate, a person answers failed: an error result, no start', 'rerun, exhausted, a person answers failed: an error result, no start'],
  },
  {
    name: "a person's rerun is not recorded",
    file: 'core/fold.ts',
    edits: [['call.rerunApproved = true;', '']],
    caughtBy: ['escalate, a person answers rerun: one more start'],
  },
  {
    name: "a person's rerun does not reset the crash count",
    file: 'core/fold.ts',
    edits: [['call.rerunFrom = call.attempt;', '']],
    caughtBy: ["rerun, exhausted, a person's rerun dies too: a fresh crash budget, runs again"],
  },
  {
    name: "verify's answer outlives the start it was about",
    file: 'core/fold.ts',
    edits: [['delete call.verified;', '']],
    caughtBy: ['verify, not landed, attempts exhausted: parks, no start'],
  },
  {
    name: "a person's rerun covers more than one start",
    file: 'core/fold.ts',
    edits: [['delete call.rerunApproved;', '']],
    caughtBy: ['escalate, a person answers rerun and that start dies too: parks again, no second start'],
  },
  // tool-runner.ts and turn-runner.ts: the code applying the decision.
  {
    name: 'not landed is recorded as landed',
    file: 'engine/tool-runner.ts',
    edits: [["status: outcome.status });", "status: outcome.status === 'not_landed' ? 'landed' : outcome.status });"]],
    caughtBy: ['verify, not landed: runs again'],
  },
  {
    name: 'a verify that threw or timed out counts as not landed',
    file: 'engine/tool-runner.ts',
    edits: [["    outcome = { status: 'unknown' };\n  } finally", "    outcome = { status: 'not_landed' };\n  } finally"]],
    caughtBy: ['verify, verify() threw: unknown, parks', 'verify, verify() timed out: unknown, parks'],
  },
  {
    name: "verify's landed result is not recorded",
    file: 'engine/tool-runner.ts',
    edits: [["if (outcome.status === 'landed') {", 'if (false) {']],
    caughtBy: ['verify, landed: its result from verify(), no start'],
  },
  {
    name: 'a result is invented for a call verify could not see',
    file: 'engine/tool-runner.ts',
    edits: [["if (outcome.status === 'landed') {", "if (outcome.status !== 'not_landed') {"]],
    caughtBy: ['verify, unknown: parks, no start, no result'],
  },
  {
    name: 'a tool that says its outcome is unknown gets an error result',
    file: 'engine/tool-runner.ts',
    edits: [['} else if (why !== undefined || error instanceof ToolOutcomeUnknownError) {', '} else if (why !== undefined) {']],
    caughtBy: ['escalate, the tool says its outcome is unknown: parks, no error result', 'idempotency_key, the tool says its outcome is unknown: runs again with the key'],
  },
  {
    name: 'verify runs the tool again instead of looking',
    file: 'engine/turn-runner.ts',
    edits: [
      [
        'await parkIfNeverFits(session, () => runVerify(session, action.callId));',
        "await parkIfNeverFits(session, () => runTools(session, { kind: 'run_tools', calls: [{ callId: action.callId, attempt: (session.state.calls[action.callId]?.attempt ?? 0) + 1 }] }));",
      ],
    ],
    caughtBy: ['verify, landed: its result from verify(), no start'],
  },
];

/** The mutant as a module of its own: the text replaced, relative imports pointed at the real tree. */
function writeMutant(m: Mutation, index: number): string {
  const path = join(root, 'lib', m.file);
  const source = readFileSync(path, 'utf8');
  let mutated = source;
  for (const [from, to] of m.edits) {
    const at = mutated.split(from).length - 1;
    if (at !== 1) throw new Error(`mutation "${m.name}": ${m.file} holds ${JSON.stringify(from)} ${at} times, not once: the code changed, update the mutation`);
    mutated = mutated.replace(from, () => to);
  }
  mutated = mutated.replace(/from '(\.{1,2}\/[^']+)'/g, (_all, rel: string) => `from '${resolve(dirname(path), rel)}'`);
  const out = join(work, `mutant-${index}.ts`);
  writeFileSync(out, mutated);
  return out;
}

/** The rows of the policy table that fail with the mutant in place of the real module. */
async function failingRows(m: Mutation, index: number): Promise<string[]> {
  const mutant = writeMutant(m, index);
  const target = join(root, 'lib', m.file.replace(/\.ts$/, '.js'));
  vi.resetModules();
  vi.doMock(target, () => import(mutant));
  try {
    const table = await import('./policy-table.js');
    const failed: string[] = [];
    for (const c of table.POLICY_CASES) {
      if ((await table.checkCase(c)).length > 0) failed.push(c.name);
    }
    return failed;
  } finally {
    vi.doUnmock(target);
    vi.resetModules();
  }
}

describe('mutations of the side-effect policies are caught by the policy table', () => {
  it('names only rows of the table, and the unmutated copy loaded the same way fails none', async () => {
    const table = await import('./policy-table.js');
    const names = new Set(table.POLICY_CASES.map((c) => c.name));
    expect(MUTATIONS.flatMap((m) => m.caughtBy).filter((n) => !names.has(n))).toEqual([]);
    const same: Mutation = { name: 'none', file: 'core/decide.ts', edits: [], caughtBy: [] };
    expect(await failingRows(same, MUTATIONS.length)).toEqual([]);
  });

  it.each(MUTATIONS.map((m, i) => [m.name, m, i] as const))('%s', async (_name, m, i) => {
    const failed = await failingRows(m, i);
    console.info(`mutation "${m.name}" caught by ${failed.length} rows: ${failed.join('; ')}`);
    expect(m.caughtBy.length).toBeGreaterThan(0);
    expect(failed).toEqual(expect.arrayContaining(m.caughtBy));
  });
});
