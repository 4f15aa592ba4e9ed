/**
 * Hostile requests for the API fuzz test, from a seeded PRNG: valid requests of every route,
 * mutated in their method, path, query (cursors above all), headers and body. Deterministic for a
 * seed, so a failure names the seed and the request index that reproduce it.
 */

/** mulberry32: a tiny seeded PRNG; the sequence is all the test needs, not statistical quality. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Rng = ReturnType<typeof prng>;

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Which template it came from and what was done to it, for the failure message. */
  label: string;
}

/** What the fuzzer knows about the world: ids that exist, cursors the API issued. */
export interface FuzzContext {
  runIds: string[];
  /** An open attention (callId) on a parked run, so resolutions reach the store. */
  parked: { runId: string; callId: string };
  cursors: string[];
}

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');

const WEIRD_STRINGS = ['', ' ', '..', '%2e%2e', '%00', '%ff', '%E0%A4%A', '\u0000', '💥', 'ü', 'a'.repeat(81), 'x'.repeat(5000), 'null', '-1', '1e400', 'RUN#acme#x', 'TENANT#globex', '<script>', "'", '"', '\\', '__proto__', 'constructor'];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'post', 'Get'];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/vnd.api+json', 'application/json; charset=utf-16', 'application/jsonx', '', 'garbage/ /'];
const STATUSES = ['running', 'waiting', 'parked', 'completed', 'failed', 'cancelled', 'RUNNING', 'done', ''];

/** Percent-encode; a lone surrogate (which cannot be encoded) becomes the invalid UTF-8 it would be. */
function pct(text: string, encode: (s: string) => string = encodeURIComponent): string {
  try {
    return encode(text);
  } catch {
    return encode(text.replace(/[\ud800-\udfff]/g, '')) + '%ED%A0%80';
  }
}

function randomString(r: Rng, max = 40): string {
  if (r.chance(0.3)) return r.pick(WEIRD_STRINGS);
  const alphabet = 'abcXYZ019_-.:#/%?&=+ \u00e9\u4e2d\ud83d\ude00';
  let out = '';
  for (let i = r.int(max); i > 0; i--) out += alphabet[r.int(alphabet.length)] ?? '';
  return out;
}

/** Any JSON value, up to `depth` levels. */
export function randomJson(r: Rng, depth = 4): unknown {
  const kind = r.int(depth > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, r.int(1000)]);
    case 3:
    case 4:
      return randomString(r);
    case 5:
      return r.pick(['support', 'desk', 'succeeded', 'rerun', 'retry', 'fail', '3-0', '1-0']);
    case 6:
    case 7: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(5); i > 0; i--) o[r.chance(0.7) ? r.pick(['agent', 'input', 'runId', 'budgets', 'version', 'callId', 'outcome', 'result', 'action', 'reason', 'maxSteps']) : randomString(r, 8)] = randomJson(r, depth - 1);
      return o;
    }
    default:
      return Array.from({ length: r.int(4) }, () => randomJson(r, depth - 1));
  }
}

function deepJson(r: Rng): string {
  const levels = r.pick([33, 64, 65, 100, 1000, 20_000]);
  const [open, close] = r.chance(0.5) ? ['[', ']'] : ['{"a":', '}'];
  return `{"agent":"support","input":${open.repeat(levels)}1${close.repeat(levels)}}`;
}

function hostileBody(r: Rng, ctx: FuzzContext): { body: string | Uint8Array; what: string } {
  switch (r.int(13)) {
    case 0:
      return { body: deepJson(r), what: 'deep nesting' };
    case 1: {
      const size = r.pick([300_000, 500_000, 1_100_000]);
      return { body: JSON.stringify({ agent: 'support', input: 'y'.repeat(size) }), what: `huge string ${size}` };
    }
    case 2:
      return { body: Uint8Array.from({ length: r.int(200) }, () => r.int(256)), what: 'binary' };
    case 3:
      return { body: Uint8Array.from([0x7b, 0x22, 0x61, 0x67, 0x65, 0x6e, 0x74, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), what: 'invalid utf-8' };
    case 4:
      return { body: r.pick(['{"agent":"support","input":{"__proto__":{"x":1}}}', '{"__proto__":{"agent":"support"},"input":"x"}', '{"callId":"1-0","outcome":"succeeded","result":{"a":{"__proto__":[]}}}']), what: '__proto__' };
    case 5:
      return { body: r.pick(['', ' ', 'null', '[]', '{', '{"agent":', '"x"', '1e400', '{"input":"\\ud800","agent":"support"}', '{"agent":"support","input":"\\u0000"}']), what: 'odd JSON' };
    case 6:
      return { body: JSON.stringify({ agent: 'support', input: randomJson(r, 6), budgets: randomJson(r, 2) }), what: 'random start fields' };
    case 7: {
      // Under the body limit, over DynamoDB's item limit once stored in the inbox.
      const size = r.pick([350_000, 450_000, 900_000]);
      return { body: JSON.stringify({ callId: ctx.parked.callId, outcome: 'succeeded', result: { note: 'z'.repeat(size) } }), what: `huge result ${size}` };
    }
    default:
      return { body: JSON.stringify(randomJson(r, 5)), what: 'random JSON' };
  }
}

function forgedCursor(r: Rng, ctx: FuzzContext): string {
  switch (r.int(9)) {
    case 0:
      return b64({ pk: 'RUN#globex#r', sk: 'HEAD', tenantPk: 'TENANT#globex', tenantSk: '8203887898736#r' });
    case 1:
      return b64(randomJson(r, 3));
    case 2:
      return b64({ v: 1, s: r.pick([null, 'running', 'x']), c: r.pick([0, -1, 1e20, 1.5, '1']), r: randomString(r, 90) });
    case 3:
      return randomString(r, 60);
    case 4:
      return Buffer.from(Uint8Array.from({ length: r.int(64) }, () => r.int(256))).toString('base64url');
    case 5:
      return (r.pick(ctx.cursors) ?? 'e30').slice(0, r.int(40));
    case 6:
      return `${r.pick(ctx.cursors) ?? ''}${randomString(r, 5)}`;
    case 7:
      return 'A'.repeat(r.pick([100, 2048, 2049, 10_000]));
    default:
      return r.pick(ctx.cursors) ?? 'e30';
  }
}

/** A valid request of a random route (a valid start only when `start` is true). */
function template(r: Rng, ctx: FuzzContext): FuzzRequest {
  const json = { 'content-type': 'application/json' };
  const id = r.chance(0.7) ? r.pick(ctx.runIds) : `fz-${r.int(50)}`;
  switch (r.int(8)) {
    case 7:
      return uploadTemplate(r);
    case 0:
      return { method: 'POST', path: '/runs', headers: json, body: JSON.stringify({ agent: 'support', input: `fuzz ${r.int(1e6)}`, ...(r.chance(0.5) ? { runId: `fz-${r.int(50)}` } : {}) }), label: 'start' };
    case 1: {
      const q = [r.chance(0.5) ? `status=${r.pick(STATUSES.slice(0, 6))}` : '', r.chance(0.5) ? `limit=${1 + r.int(100)}` : '', r.chance(0.6) ? `cursor=${encodeURIComponent(r.pick(ctx.cursors) ?? '')}` : ''].filter(Boolean);
      return { method: 'GET', path: `/runs${q.length ? `?${q.join('&')}` : ''}`, headers: {}, label: 'list' };
    }
    case 2:
      return { method: 'GET', path: `/runs/${id}`, headers: {}, label: 'get' };
    case 3:
      return { method: 'GET', path: `/runs/${id}/events?after=${r.int(20)}&limit=${1 + r.int(500)}`, headers: {}, label: 'events' };
    case 4:
      return { method: 'POST', path: `/runs/${id}/cancel`, headers: json, body: r.chance(0.5) ? JSON.stringify({ reason: 'fuzz' }) : '', label: 'cancel' };
    case 5: {
      const body = r.chance(0.8)
        ? { callId: ctx.parked.callId, outcome: r.pick(['succeeded', 'failed', 'rerun']), ...(r.chance(0.5) ? { result: randomJson(r, 3) } : {}) }
        : { action: r.pick(['retry', 'fail']) };
      return { method: 'POST', path: `/runs/${ctx.parked.runId}/resolve`, headers: json, body: JSON.stringify(body), label: 'resolve' };
    }
    default:
      return { method: 'GET', path: '/openapi.json', headers: {}, label: 'openapi' };
  }
}

const UPLOAD_TYPES = ['image/png', 'image/jpeg', 'application/pdf', 'text/plain', 'text/csv; charset=utf-8', 'image/svg+xml', 'application/octet-stream', ''];

/** An upload (POST /attachments): PNG, PDF or text bytes, or random ones, under a random allowed or refused type. */
function uploadTemplate(r: Rng): FuzzRequest {
  const kind = r.int(4);
  const random = Uint8Array.from({ length: 1 + r.int(64) }, () => r.int(256));
  const body =
    kind === 0
      ? Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...random])
      : kind === 1
        ? new TextEncoder().encode(`%PDF-1.7 ${randomString(r, 20)}`)
        : kind === 2
          ? new TextEncoder().encode(randomString(r, 40))
          : random;
  const type = r.pick(UPLOAD_TYPES);
  const name = r.chance(0.5) ? `?name=${pct(randomString(r, 12))}` : '';
  return { method: 'POST', path: `/attachments${name}`, headers: type ? { 'content-type': type } : {}, body, label: 'upload' };
}

/** One request: a template with one to three mutations (a few starts stay valid, about 1 in 140). */
export function fuzzRequest(r: Rng, ctx: FuzzContext): FuzzRequest {
  const req = template(r, ctx);
  if (req.label === 'start' && r.chance(0.05)) return req;
  const what: string[] = [];
  for (let m = 1 + r.int(3); m > 0; m--) {
    switch (r.int(6)) {
      case 0:
        req.method = r.pick(METHODS);
        what.push(`method ${req.method}`);
        break;
      case 1: {
        const [path = '', query] = req.path.split('?');
        const parts = path.split('/');
        const i = 1 + r.int(Math.max(1, parts.length - 1));
        if (r.chance(0.5)) parts[i] = pct(randomString(r, 30), encodeURI).replace(/%25/g, '%');
        else parts.splice(i, 0, pct(randomString(r, 10)));
        req.path = parts.join('/') + (r.chance(0.2) ? '/' : '') + (query !== undefined ? `?${query}` : '');
        what.push('path');
        break;
      }
      case 2:
      case 3: {
        const key = r.pick(['cursor', 'cursor', 'cursor', 'limit', 'status', 'after', randomString(r, 6)]);
        const value = key === 'cursor' ? forgedCursor(r, ctx) : key === 'status' ? r.pick(STATUSES) : r.chance(0.5) ? randomString(r, 12) : String(r.pick([0, -1, 101, 501, 1e21, 2 ** 53, 1.5]));
        const encoded = r.chance(0.8) ? pct(value) : pct(value, encodeURI).replace(/#/g, '');
        req.path += `${req.path.includes('?') ? '&' : '?'}${pct(key)}=${encoded}`;
        what.push(`query ${key}`);
        break;
      }
      case 4:
        req.headers = { ...req.headers, 'content-type': r.pick(CONTENT_TYPES) };
        if (r.chance(0.3)) req.headers['x-fuzz'] = randomString(r, 200).replace(/[^\x20-\x7e]/g, 'x');
        what.push(`content-type ${req.headers['content-type']}`);
        break;
      default: {
        const hostile = hostileBody(r, ctx);
        req.body = hostile.body;
        if (!req.headers['content-type']) req.headers['content-type'] = 'application/json';
        what.push(`body ${hostile.what}`);
      }
    }
  }
  req.label = `${req.label}: ${what.join(', ')}`;
  return req;
}
