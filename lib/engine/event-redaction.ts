import type { EventDraft } from '../core/events.js';
import type { InboxItem } from '../core/inbox.js';
import type { JsonValue } from '../core/json.js';
import type { Redactor } from '../core/redaction.js';

/**
 * The one redaction step for the fields of events and inbox items that are not bodies (bodies are
 * redacted by the codec's encode): every string, at any depth, is redacted as text unless it is
 * structure the engine matches on. So a comment, a reason, a message, a detail, a principal's
 * name, a provider's parse error, and any free-text field added later are redacted without a
 * case here; only what must stay byte for byte is named.
 */

/** Ids, hashes, enums and names the engine matches on: redacting one would break a match or a pin. */
const STRUCTURAL = new Set([
  'type',
  'kind',
  'tenant',
  'runId',
  'childRunId',
  'requestHash',
  'callId',
  'providerId',
  'inboxId',
  'id',
  'argsHash',
  'sha256',
  'key',
  'code',
  'errorCode',
  'source',
  'status',
  'decision',
  'outcome',
  'action',
  'via',
  'signal',
  'purpose',
  'unresolved',
  // A call's tool name: the model's, matched against the pinned tools.
  'name',
]);

/**
 * Pinned content and numbers: the agent or workflow, its model, prompt version and hash, tool
 * contracts (a tool's JSON Schema is hashed into its pin), budgets, usage, waits, fork and parent
 * links. An operation's `name` (a workflow step's) is matched on replay: it is in STRUCTURAL.
 */
const PINNED = new Set([
  'agent',
  'workflow',
  'model',
  'prompt',
  'tools',
  'inputSchema',
  'context',
  'budgets',
  'usage',
  'reservation',
  'childUsage',
  'covers',
  // A call's or an operation's wait: signal names, child run ids and definitions, schemas (its bodies are the codec's).
  'wait',
  'forkedFrom',
  'parent',
]);

/** Free text a client or a provider can make long: bounded after redaction. */
const BOUNDED = new Set(['message', 'detail', 'reason', 'comment']);
export const MAX_EVENT_TEXT_CHARS = 4_000;

function isBody(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const kind = (value as { kind?: unknown }).kind;
  return (kind === 'inline' && 'value' in value) || (kind === 'blob' && typeof (value as { key?: unknown }).key === 'string');
}

function walk(value: unknown, key: string | undefined, redactor: Redactor, skip: (key: string) => boolean): unknown {
  if (typeof value === 'string') {
    const out = redactor.text(value);
    return key !== undefined && BOUNDED.has(key) ? out.slice(0, MAX_EVENT_TEXT_CHARS) : out;
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, key, redactor, skip));
  if (value === null || typeof value !== 'object' || isBody(value)) return value;
  const record = value as Record<string, unknown>;
  for (const [k, v] of Object.entries(record)) {
    if (skip(k)) continue;
    record[k] = walk(v, k, redactor, skip);
  }
  return record;
}

/** Redact, in place, every free-text field of a draft whose bodies are already encoded. */
export function redactEventText(draft: EventDraft, redactor: Redactor): void {
  // run_started's `output` is the pinned output schema; elsewhere `output` is a body.
  const pinnedOutput = draft.type === 'run_started';
  walk(draft, undefined, redactor, (k) => STRUCTURAL.has(k) || PINNED.has(k) || (pinnedOutput && k === 'output'));
}

/**
 * An inbox item as it is stored: its payloads (a signal's payload, a message, an edit's arguments,
 * a resolution's result) redacted as JSON, exactly as the event made from it will hold them (the
 * codec's encode: redaction is idempotent, so the event's hash of edited arguments is the same),
 * and its free text (a comment, a reason, who sent it) as text. An item waits in the store until
 * the lease holder ingests it: it never holds more than the log would.
 */
export function redactInboxItem(item: InboxItem, redactor: Redactor): InboxItem {
  const copy = structuredClone(item) as InboxItem & Record<string, unknown>;
  for (const field of ['output', 'input', 'args', 'result'] as const) {
    if (field in copy && copy[field] !== undefined) copy[field] = redactor.json(copy[field] as JsonValue);
  }
  walk(
    copy,
    undefined,
    redactor,
    (k) => STRUCTURAL.has(k) || k === 'output' || k === 'input' || k === 'args' || k === 'result' || k === 'body' || k === 'usage',
  );
  return copy;
}
