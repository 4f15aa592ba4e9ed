// Hostile input, from outside: 10,000 generated requests (seeded, see api-fuzz-requests.ts) sent
// to the API app in-process, backed by the real DynamoDB, S3 and SQS adapters on the emulators so
// that SDK validation errors surface as they would on AWS. No answer may be a 5xx, every refusal
// carries an error code, and no run may be created by a request that is not a valid start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMITS, shapeProblem } from '../../lib/api/body-guard.js';
import { StartRunBodySchema } from '../../lib/api/schemas.js';
import { endpointsFor } from '../setup/emulator-context.js';
import { fuzzRequest, prng, type FuzzContext, type FuzzRequest } from './api-fuzz-requests.js';
import { apiWorld, type ApiWorld } from './api-world.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
const SEED = Number(process.env.LOGBOOK_FUZZ_SEED ?? 20261201);
const REQUESTS = 10_000;
const IN_FLIGHT = 8;

/** Our own oracle of a valid start: only such a request may create a run. */
function isValidStart(req: FuzzRequest): boolean {
  // The path as the app sees it: URL parsing resolves dot segments (`/../runs` is `/runs`).
  if (req.method.toUpperCase() !== 'POST' || new URL(`http://api${req.path}`).pathname !== '/runs') return false;
  if (!/^application\/([\w.-]+\+)?json$/i.test((req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '')) return false;
  const bytes = typeof req.body === 'string' ? Buffer.from(req.body) : Buffer.from(req.body ?? []);
  if (bytes.byteLength > DEFAULT_BODY_LIMITS.maxBodyBytes) return false;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return false;
  }
  if (shapeProblem(value, DEFAULT_BODY_LIMITS.maxJsonDepth)) return false;
  const parsed = StartRunBodySchema.safeParse(value);
  return parsed.success && ['support', 'desk'].includes(parsed.data.agent ?? '');
}

describe.runIf(endpointsFor(target))(`the API under ${REQUESTS} hostile requests on ${target}`, () => {
  let world: ApiWorld;

  async function send(req: FuzzRequest, caller: number) {
    // fetch cannot even build a GET/HEAD with a body; the Lambda adapter's share is tested apart.
    const body = ['GET', 'HEAD'].includes(req.method.toUpperCase()) ? undefined : req.body;
    const res = await world.request(req.path, { method: req.method, headers: req.headers, caller, ...(body !== undefined ? { body } : {}) });
    return { status: res.status, text: await res.text(), allow: res.headers.get('allow') };
  }

  async function countRuns(): Promise<number> {
    let n = 0;
    for (const tenant of ['acme', 'globex']) {
      let cursor: string | undefined;
      do {
        const page = await world.store.listRuns(tenant, { limit: 100, ...(cursor ? { cursor } : {}) });
        n += page.runs.length;
        cursor = page.cursor;
      } while (cursor);
    }
    return n;
  }

  beforeAll(async () => {
    world = await apiWorld(target, 'fuzz');
  });

  afterAll(async () => {
    await world?.dispose();
  });

  it('answers no request with a 5xx, refuses each with a code, and creates runs only for valid starts', async () => {
    // A world worth attacking: runs of two tenants, listing cursors, and a run parked on an open attention.
    const seeded = ['fz-1', 'fz-2', 'fz-3', 'fz-4', 'fz-5'];
    for (const [i, runId] of seeded.entries()) {
      expect(
        (
          await send(
            {
              method: 'POST',
              path: '/runs',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ agent: 'support', runId, input: 'seed' }),
              label: 'seed',
            },
            i % 2,
          )
        ).status,
      ).toBe(201);
    }
    const { callId } = await world.parkRun('fz-parked');
    const cursors: string[] = [];
    for (const [caller, query] of [
      [0, 'limit=1'],
      [0, 'limit=1&status=running'],
      [1, 'limit=1'],
    ] as const) {
      const page = JSON.parse((await send({ method: 'GET', path: `/runs?${query}`, headers: {}, label: 'seed' }, caller)).text) as { cursor?: string };
      if (page.cursor) cursors.push(page.cursor);
    }
    expect(cursors).toHaveLength(3);
    const ctx: FuzzContext = { runIds: [...seeded, 'fz-parked'], parked: { runId: 'fz-parked', callId }, cursors };
    const before = await countRuns();

    // The fuzz: bounded concurrency, deterministic requests.
    const r = prng(SEED);
    const requests = Array.from({ length: REQUESTS }, () => ({ req: fuzzRequest(r, ctx), caller: r.pick([0, 0, 0, 1, 2]) }));
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let created = 0;
    let uploads = 0;
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const { req, caller } = requests[i]!;
        const res = await send(req, caller);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const where = `#${i} (seed ${SEED}) ${req.method} ${req.path.slice(0, 120)} [${req.label}]`;
        if (res.status >= 500) failures.push(`${res.status} ${where}: ${res.text.slice(0, 200)}`);
        // An upload stores an attachment, not a run: counted apart.
        if (res.status === 201 && new URL(`http://api${req.path}`).pathname === '/attachments') uploads++;
        else if (res.status === 201) {
          created++;
          if (!isValidStart(req)) failures.push(`created a run for an invalid start ${where}`);
        }
        if (res.status >= 400 && req.method.toUpperCase() !== 'HEAD') {
          const code = (() => {
            try {
              return (JSON.parse(res.text) as { error?: { code?: unknown } }).error?.code;
            } catch {
              return undefined;
            }
          })();
          if (typeof code !== 'string') failures.push(`${res.status} without an error code ${where}: ${res.text.slice(0, 100)}`);
        }
        if (res.status === 405 && !res.allow) failures.push(`405 without Allow ${where}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));

    console.info(
      `api fuzz: ${REQUESTS} requests (seed ${SEED}), statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}, ${created} runs created by valid starts, ${uploads} uploads stored`,
    );
    expect(failures.slice(0, 20)).toEqual([]);
    expect(world.errors.slice(0, 5)).toEqual([]);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    // Every run in the table is a seeded one or was answered 201 to a valid start.
    expect(await countRuns()).toBe(before + created);
    // The mix reached every kind of refusal, not only the first validator.
    for (const status of [400, 401, 404, 405, 409, 413, 415]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  }, 180_000);
});
