import type { JsonValue } from '../../../lib/core/json.js';

/** mulberry32: a tiny seeded PRNG, so a failing case is replayed from its seed. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chars(n: number, alphabet: string): string {
    let out = '';
    for (let i = 0; i < n; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const B64 = ALNUM + '+/';
const URLSAFE = ALNUM + '_-';

/** A planted secret: the text that carries it, and the part that must never be stored. */
export interface Plant {
  kind: string;
  text: string;
  secret: string;
}

/** Mixed case and a digit for sure, as real generated keys have (and the bare AWS rule asks). */
function mixed(rng: Rng, n: number, alphabet: string): string {
  return rng.chars(1, UPPER) + rng.chars(1, LOWER) + rng.chars(1, DIGITS) + rng.chars(n - 3, alphabet);
}

const same = (kind: string, s: string): Plant => ({ kind, text: s, secret: s });
const around = (kind: string, text: (s: string) => string, s: string): Plant => ({ kind, text: text(s), secret: s });

/** Every format the built-in rules know, with fresh random values each time. */
export const FORMATS: readonly ((rng: Rng) => Plant)[] = [
  (r) => same('stripe', `sk_live_${mixed(r, 24, ALNUM)}`),
  (r) => same('stripe_restricted', `rk_live_${mixed(r, 24, ALNUM)}`),
  (r) => same('google', `AIza${mixed(r, 35, URLSAFE)}`),
  (r) => same('github_pat', `github_pat_${mixed(r, 22, ALNUM)}_${mixed(r, 59, ALNUM)}`),
  (r) => same('github', `ghp_${mixed(r, 36, ALNUM)}`),
  (r) => same('aws_id', `AKIA${r.chars(16, UPPER + DIGITS)}`),
  (r) => around('aws_pair', (s) => `AKIA${r.chars(16, UPPER + DIGITS)} ${s}`, mixed(r, 40, B64)),
  (r) => around('url', (pw) => `postgres://u${r.int(99)}:${pw}@db${r.int(9)}.internal:5432/app`, mixed(r, 14, ALNUM + '-_')),
  (r) => around('slack_webhook', (s) => `https://hooks.slack.com/services/T${r.chars(8, UPPER + DIGITS)}/B${r.chars(10, UPPER + DIGITS)}/${s}`, mixed(r, 24, ALNUM)),
  (r) => same('sendgrid', `SG.${mixed(r, 22, URLSAFE)}.${mixed(r, 43, URLSAFE)}`),
  (r) => around('azure', (s) => `DefaultEndpointsProtocol=https;AccountName=a${r.int(99)};AccountKey=${s};EndpointSuffix=core.windows.net`, `${mixed(r, 86, B64)}==`),
  (r) => around('basic', (s) => `sent with Basic ${s} to the proxy`, btoa(`user${r.int(99)}:${mixed(r, 12, ALNUM)}`)),
  (r) => around('bearer', (s) => `Authorization header was Bearer ${s}`, mixed(r, 32, ALNUM)),
  (r) => around('pem', (s) => `-----BEGIN RSA PRIVATE KEY-----\n${s}\n-----END RSA PRIVATE KEY-----`, mixed(r, 64, B64)),
  (r) => around('pgp', (s) => `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${s}\n=Ab1c\n-----END PGP PRIVATE KEY BLOCK-----`, mixed(r, 64, B64)),
  (r) => around('jwt', (s) => `eyJ${mixed(r, 20, URLSAFE)}.eyJ${mixed(r, 30, URLSAFE)}.${s}`, mixed(r, 43, URLSAFE)),
  (r) => same('openai', `sk-proj-${mixed(r, 40, ALNUM)}`),
  (r) => same('slack_token', `xoxb-${r.chars(11, DIGITS)}-${r.chars(11, DIGITS)}-${mixed(r, 24, ALNUM)}`),
  (r) => around('assignment', (s) => `DB_PASSWORD=${s}`, mixed(r, 14, ALNUM)),
];

/** Key names under which any value is a secret, as applications spell them. */
export const SECRET_KEYS = ['password', 'Password', 'db_password', 'clientSecret', 'client-secret', 'api_key', 'apiKey', 'X-Api-Key', 'access_token', 'refreshToken', 'private_key', 'aws_secret_access_key', 'authorization', 'Cookie', 'secret', 'token', 'credentials'];

/** Benign keys, some of them look-alikes that must stay readable. */
const KEYS = ['note', 'items', 'meta', 'data', 'value', 'list', 'id', 'name', 'summary', 'rows', 'tokens', 'nextToken', 'secretName', 'tokenType', 'owner', 'status'];
const WORDS = ['order', 'shipped', 'the', 'refund', 'customer', 'asked', 'about', 'invoice', 'late', 'box', 'damaged', 'label', 'warehouse', 'north', 'ticket'];

export interface Doc {
  value: JsonValue;
  plants: Plant[];
}

function prose(rng: Rng, words: number): string {
  return Array.from({ length: words }, () => rng.pick(WORDS)).join(' ');
}

function leaf(rng: Rng): JsonValue {
  switch (rng.int(5)) {
    case 0:
      return rng.int(100_000);
    case 1:
      return rng.int(2) === 0;
    case 2:
      return null;
    default:
      return prose(rng, 1 + rng.int(6));
  }
}

function tree(rng: Rng, depth: number): JsonValue {
  if (depth <= 0 || rng.int(3) === 0) return leaf(rng);
  if (rng.int(2) === 0) return Array.from({ length: rng.int(4) }, () => tree(rng, depth - 1));
  const out: Record<string, JsonValue> = {};
  const n = 1 + rng.int(4);
  for (let i = 0; i < n; i++) out[`${rng.pick(KEYS)}${i}`] = tree(rng, depth - 1);
  if (rng.int(3) === 0) out['inputTokens'] = rng.int(50_000);
  return out;
}

/** A random container reached by a random walk: where a secret goes. */
function container(rng: Rng, root: Record<string, JsonValue>): Record<string, JsonValue> | JsonValue[] {
  let at: Record<string, JsonValue> | JsonValue[] = root;
  for (;;) {
    const children: (Record<string, JsonValue> | JsonValue[])[] = (Array.isArray(at) ? at : Object.values(at)).filter((v): v is Record<string, JsonValue> | JsonValue[] => v !== null && typeof v === 'object');
    if (children.length === 0 || rng.int(3) === 0) return at;
    at = rng.pick(children);
  }
}

/**
 * A random document (an object, as tool arguments are) with 1 to 4 secrets planted at random
 * depths: under a secret key (a value that only its key gives away), or inside prose in a string.
 */
export function randomDoc(rng: Rng, extra: readonly ((rng: Rng) => Plant)[] = [], secretKeys: readonly string[] = SECRET_KEYS): Doc {
  const root: Record<string, JsonValue> = { note: prose(rng, 3), body: tree(rng, 1 + rng.int(5)) };
  const plants: Plant[] = [];
  const count = 1 + rng.int(4);
  for (let i = 0; i < count; i++) {
    const byKey = rng.int(3) === 0;
    const plant: Plant = byKey
      ? same('key', mixed(rng, 10 + rng.int(10), ALNUM))
      : rng.pick([...FORMATS, ...extra])(rng);
    plants.push(plant);
    const where = container(rng, root);
    const text = byKey ? plant.text : `${prose(rng, rng.int(4))} ${plant.text} ${prose(rng, rng.int(4))}`.trim();
    if (Array.isArray(where) && !byKey) where.splice(rng.int(where.length + 1), 0, text);
    else if (Array.isArray(where)) where.push({ [rng.pick(secretKeys)]: text });
    else where[byKey ? rng.pick(secretKeys) : `${rng.pick(KEYS)}_${i}`] = text;
  }
  return { value: root, plants };
}

/** Every key of every object, every array length, every number and boolean: what redaction keeps. */
export function shape(value: JsonValue): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === 'object') return Object.entries(value).map(([k, v]) => [k, shape(v)]);
  return typeof value === 'string' ? 's' : value;
}
