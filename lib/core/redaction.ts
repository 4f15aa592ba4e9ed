import { ConfigError } from './errors.js';
import type { JsonValue } from './json.js';
import { isSecretKey, normalizeKey } from './redaction-keys.js';
import { base64Text } from './redaction-checks.js';
import {
  BASE64_CANDIDATE,
  BASE64_HINT,
  BASE64_RULE_NAME,
  DEFAULT_REDACTION_RULES,
  SECRET_KEY_STEMS,
  keyedTextRules,
  type RedactionRule,
} from './redaction-rules.js';

export { DEFAULT_REDACTION_RULES, type RedactionRule };

/**
 * What an application adds to the built-in redaction (`defineAgents({ ..., redaction })`, or
 * `createEngine(ports, { redaction })` for a custom host). Every process that writes a run's
 * events (API, trigger, worker) must apply the same options: they live with the agents for that.
 */
export interface RedactionOptions {
  /** More patterns, run after the built-in ones. */
  rules?: readonly RedactionRule[];
  /**
   * More key names whose values are secrets, at any depth: a string is compared as the built-in
   * names are (case, `_`, `-` and `.` ignored: 'accountNumber' also matches `account_number`),
   * a RegExp is tested against the key as written.
   */
  keys?: readonly (string | RegExp)[];
  /**
   * Fields never redacted, by neither key nor pattern, with everything beneath them. An entry
   * without a dot is a key name at any depth (compared like `keys`); one with dots is a path from
   * the payload's root (a run's input, a tool's arguments or output, an answer), `*` standing for
   * any one key or array index: `'publicKey'`, `'order.trackingToken'`, `'items.*.sessionId'`.
   */
  allow?: readonly string[];
  /** false: only the application's rules and keys, none of the built-in ones. Default true. */
  defaults?: boolean;
}

interface CompiledRule {
  name: string;
  /** A cheaper test a string must pass before the probe runs (the key-name stems of the keyed rules). */
  gate?: RegExp;
  /** Skipped for a string the redactor's combined hint does not match (the rule's own hint, or its gate, is part of it). */
  hinted?: boolean;
  /** Does the string hold a match at all (most do not): cheaper than any scan. */
  probe: RegExp;
  scan: RegExp;
  /** Where the `secret` group of a match lies (sticky, with indices); only for accepted matches. */
  locate?: RegExp;
  near?: RegExp;
  accept?: RedactionRule['accept'];
}

/** A JSON escape glued to a word (`\ntoken`), and the same-length stand-ins a rule sees as separators. */
const JSON_ESCAPE = /\\[nrt](?=[A-Za-z0-9_])/;
const JSON_ESCAPE_ALL = /\\([nrt])(?=[A-Za-z0-9_])/g;
const MASKS = /[\x01-\x03]/;
const MASKED = /\\([\x01-\x03])/g;
const MASK: Record<string, string> = { n: '\x01', r: '\x02', t: '\x03' };
const UNMASK: Record<string, string> = { '\x01': 'n', '\x02': 'r', '\x03': 't' };

/** How many base64 wrappings are looked through (a secret encoded twice is still found). */
const MAX_BASE64_DEPTH = 2;

/** What a string under a secret key becomes. */
export const FIELD_PLACEHOLDER = '[REDACTED:field]';
const PLACEHOLDER = /^\[REDACTED:[A-Za-z0-9_.-]+\]$/;
const RULE_NAME = /^[A-Za-z0-9_.-]+$/;

function compile(rule: RedactionRule, where: string): CompiledRule {
  if (typeof rule?.name !== 'string' || !RULE_NAME.test(rule.name)) {
    throw new ConfigError(`${where}.name: letters, digits, '_', '.' and '-' only (it is shown as [REDACTED:<name>])`);
  }
  if (!(rule.pattern instanceof RegExp)) throw new ConfigError(`${where}.pattern: a RegExp`);
  if (rule.near !== undefined && !(rule.near instanceof RegExp)) throw new ConfigError(`${where}.near: a RegExp`);
  if (rule.accept !== undefined && typeof rule.accept !== 'function') throw new ConfigError(`${where}.accept: a function`);
  const keep = (flags: string) => [...flags].filter((f) => 'imsu'.includes(f)).join('');
  const flags = keep(rule.pattern.flags);
  const source = rule.pattern.source;
  return {
    name: rule.name,
    probe: new RegExp(source, flags),
    scan: new RegExp(source, `${flags}g`),
    // Indices (d) slow every match down: asked only of the few matches that are replaced.
    ...(source.includes('(?<secret>') ? { locate: new RegExp(source, `${flags}yd`) } : {}),
    ...(rule.near ? { near: new RegExp(rule.near.source, keep(rule.near.flags)) } : {}),
    ...(rule.accept ? { accept: rule.accept } : {}),
  };
}

/** The span a match's `secret` group covers, or the whole match's. */
function spanOf(text: string, rule: CompiledRule, m: RegExpExecArray): [number, number] {
  const whole: [number, number] = [m.index, m.index + m[0].length];
  if (!rule.locate || m.groups?.['secret'] === undefined) return whole;
  rule.locate.lastIndex = m.index;
  return rule.locate.exec(text)?.indices?.groups?.['secret'] ?? whole;
}

function replaceAll(text: string, rule: CompiledRule, accept = rule.accept): string {
  if (!rule.probe.test(text)) return text;
  let out = '';
  let last = 0;
  for (const m of text.matchAll(rule.scan)) {
    const secret = m.groups?.['secret'] ?? m[0];
    // An earlier rule's placeholder stays as it is: redacting twice gives the same text.
    if (secret.length === 0 || PLACEHOLDER.test(secret) || (accept && !accept(secret, m[0], m.groups ?? {}))) continue;
    const [start, end] = spanOf(text, rule, m);
    if (start < last) continue;
    out += `${text.slice(last, start)}[REDACTED:${rule.name}]`;
    last = end;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * Redacts string values by pattern (anywhere in a string) and by the key they sit under (every
 * string beneath a secret key), never object keys, numbers, booleans or the JSON structure, so
 * ids, tool names and `inputTokens` counts stay as they are. Applied to every payload before it
 * is written (redact, offload, hash): the model and the tools see the redacted form, live and on
 * resume alike.
 */
export class Redactor {
  private readonly rules: CompiledRule[];
  private readonly nearRules: CompiledRule[];
  private readonly defaults: boolean;
  private readonly keyNames: Set<string>;
  private readonly keyPatterns: RegExp[];
  private readonly allowKeys: Set<string>;
  private readonly allowPaths: string[][];
  /** A necessary condition of every hinted rule (and the base64 rule): a string without a match skips them all. */
  private readonly hint: RegExp | undefined;
  /** The base64 rule (with the built-in rules only): it redacts a blob by redacting what it decodes to. */
  private readonly base64: CompiledRule | undefined;
  /** Every rule with `near`, as if each had its company: what a preview of text still growing uses. */
  private readonly allNear: ReadonlySet<CompiledRule>;

  constructor(options: RedactionOptions = {}) {
    this.defaults = options.defaults ?? true;
    const appRules = (options.rules ?? []).map((r, i) => compile(r, `redaction.rules[${i}]`));
    this.keyNames = new Set();
    this.keyPatterns = [];
    (options.keys ?? []).forEach((k, i) => {
      if (k instanceof RegExp) this.keyPatterns.push(new RegExp(k.source, k.flags.replace(/[gy]/g, '')));
      else if (typeof k === 'string' && normalizeKey(k) !== '') this.keyNames.add(normalizeKey(k));
      else throw new ConfigError(`redaction.keys[${i}]: a key name with a letter or digit, or a RegExp`);
    });
    this.allowKeys = new Set();
    this.allowPaths = [];
    (options.allow ?? []).forEach((a, i) => {
      if (typeof a !== 'string' || a.split('.').some((s) => s === '')) throw new ConfigError(`redaction.allow[${i}]: a key name or a dotted path`);
      if (a.includes('.')) this.allowPaths.push(a.split('.'));
      else this.allowKeys.add(normalizeKey(a));
    });
    // Keys in free text are found by the same test as object keys, after every format.
    // The application's key names, separators anywhere (`badgeCode` finds `badge_code`); a RegExp
    // key can match any name, so then every key in free text is looked at.
    const own = [...this.keyNames].map((k) => [...k].join('[_.\\-]?'));
    const stems = this.keyPatterns.length > 0 ? undefined : [...(this.defaults ? SECRET_KEY_STEMS : []), ...own];
    const keyed = keyedTextRules((name) => {
      const normalized = normalizeKey(name);
      return !this.allowKeys.has(normalized) && this.isSecretKey(name, normalized);
    }, stems);
    const builtIn = this.defaults ? DEFAULT_REDACTION_RULES : [];
    // A string with none of the stems has no secret key in it: one scan for the words instead of four rules' look-aheads at every position.
    const gate = stems && stems.length > 0 ? new RegExp(stems.join('|'), 'i') : undefined;
    const keyedRules = keyed.map((r, i) => ({ ...compile(r, `keyed[${i}]`), ...(gate ? { gate, hinted: true } : {}) }));
    const builtInRules = builtIn.map((r, i) => ({ ...compile(r, `defaults[${i}]`), ...(r.hint ? { hinted: true } : {}) }));
    this.rules = [...builtInRules, ...appRules, ...keyedRules];
    // One scan over the union of the hints decides, for most strings, that no hinted rule can match.
    const hints = [...builtIn.flatMap((r) => (r.hint ? [r.hint.source] : [])), ...(gate ? [gate.source] : []), ...(this.defaults ? [BASE64_HINT.source] : [])];
    this.hint = hints.length > 0 ? new RegExp(hints.join('|'), 'i') : undefined;
    this.nearRules = this.rules.filter((r) => r.near);
    this.allNear = new Set(this.nearRules);
    this.base64 = this.defaults ? compile({ name: BASE64_RULE_NAME, pattern: BASE64_CANDIDATE }, 'base64') : undefined;
  }

  /** A string with every pattern's matches replaced. */
  text(value: string): string {
    return this.textNear(value, undefined, 0);
  }

  /**
   * A string as a live preview shows it before the text around it is known (a model's streamed
   * text): every rule that needs company applies as if it had it, since the company may come later
   * (an AWS secret key whose key id the model writes in its next sentence). Never less redacted
   * than text(); the stream redactor (redaction-stream.ts) uses it.
   */
  preview(value: string): string {
    return this.textNear(value, this.allNear, 0);
  }

  json(value: JsonValue): JsonValue {
    return this.walk(value, [], false, undefined);
  }

  private textNear(value: string, near: ReadonlySet<CompiledRule> | undefined, depth: number): string {
    // Text that went through JSON.stringify keeps `\nghp_...` as a backslash and a word: the rules
    // see the escape's letter as a separator (same length, so nothing moves), then it is put back.
    if (value.includes('\\') && JSON_ESCAPE.test(value) && !MASKS.test(value)) {
      const masked = value.replace(JSON_ESCAPE_ALL, (_m, letter: string) => `\\${MASK[letter]}`);
      return this.rulesOn(masked, near, depth).replace(MASKED, (_m, mask: string) => `\\${UNMASK[mask]}`);
    }
    return this.rulesOn(value, near, depth);
  }

  private rulesOn(value: string, near: ReadonlySet<CompiledRule> | undefined, depth: number): string {
    let out = value;
    const hinted = this.hint === undefined || this.hint.test(value);
    for (const rule of this.rules) {
      if (rule.hinted && !hinted) continue;
      if (rule.near && !near?.has(rule) && !rule.near.test(value)) continue;
      // The gate looks at the text as it came: a placeholder's name (`[REDACTED:github_token]`) is no key.
      if (rule.gate && !rule.gate.test(value)) continue;
      out = replaceAll(out, rule);
    }
    // A blob is a secret when what it decodes to holds one (two wrappings deep at most).
    if (this.base64 && hinted && depth < MAX_BASE64_DEPTH) {
      out = replaceAll(out, this.base64, (blob) => {
        const decoded = base64Text(blob);
        return decoded !== undefined && this.textNear(decoded, near === this.allNear ? near : undefined, depth + 1) !== decoded;
      });
    }
    return out;
  }

  private walk(value: JsonValue, path: string[], secret: boolean, near: ReadonlySet<CompiledRule> | undefined): JsonValue {
    if (typeof value === 'string') {
      if (!secret) return this.textNear(value, near, 0);
      return value === '' || PLACEHOLDER.test(value) ? value : FIELD_PLACEHOLDER;
    }
    if (Array.isArray(value)) {
      const company = this.nearOf(value);
      return value.map((v, i) => this.child(v, path, String(i), false, secret, company));
    }
    if (value !== null && typeof value === 'object') {
      const company = this.nearOf(Object.values(value));
      const out: Record<string, JsonValue> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.child(v, path, k, true, secret, company);
      return out;
    }
    return value;
  }

  private child(value: JsonValue, path: string[], segment: string, isKey: boolean, secret: boolean, near: ReadonlySet<CompiledRule> | undefined): JsonValue {
    const at = this.allowPaths.length > 0 ? [...path, segment] : path;
    if (isKey) {
      const normalized = normalizeKey(segment);
      if (this.allowKeys.has(normalized)) return value;
      secret ||= this.isSecretKey(segment, normalized);
    }
    if (this.allowPaths.some((p) => p.length === at.length && p.every((s, i) => s === '*' || s === at[i]))) return value;
    return this.walk(value, at, secret, near);
  }

  private isSecretKey(key: string, normalized: string): boolean {
    return (this.defaults && isSecretKey(normalized)) || this.keyNames.has(normalized) || this.keyPatterns.some((p) => p.test(key));
  }

  /** The rules with `near` that a string among these values satisfies: they apply to all of them. */
  private nearOf(values: JsonValue[]): ReadonlySet<CompiledRule> | undefined {
    if (this.nearRules.length === 0) return undefined;
    let hits: Set<CompiledRule> | undefined;
    for (const rule of this.nearRules) {
      if (values.some((v) => typeof v === 'string' && rule.near?.test(v))) (hits ??= new Set()).add(rule);
    }
    return hits;
  }
}
