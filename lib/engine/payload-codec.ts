import { inlineText, type Body } from '../core/body.js';
import type { EventDraft } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { RunRef } from '../core/run-ref.js';
import type { Checkpoints } from './checkpoints.js';
import { sha256Hex } from '../support/hash.js';
import type { Redactor } from '../core/redaction.js';

export interface PayloadCodecOptions {
  blobs: BlobStore;
  redactor: Redactor;
  /** Bodies larger than this (UTF-8 bytes of their JSON) go to the blob store. */
  inlineLimitBytes?: number;
  /** An event larger than this after encoding has its largest inline bodies offloaded too. */
  maxEventBytes?: number;
  /** Resolved blobs kept in memory, by sha256. */
  cacheEntries?: number;
}

const encoder = new TextEncoder();

/** Where a run's offloaded payload lives: under its tenant and run, named by its content. */
export function blobKey(run: RunRef, sha256: string): string {
  return `blobs/${run.tenant}/${run.runId}/${sha256}.json`;
}
const decoder = new TextDecoder();

/**
 * Order on write: redact, then offload, then hash. Large bodies live in a content-addressed blob
 * under the run's prefix; events keep {key, sha256, size, summary}. Reads resolve a reference by
 * one rule through a content-addressed cache and check the hash, live and on replay alike.
 */
export class PayloadCodec {
  private readonly inlineLimit: number;
  private readonly maxEvent: number;
  private readonly cache = new Map<string, JsonValue>();
  private readonly texts = new WeakMap<Body, string>();
  private readonly cacheEntries: number;

  constructor(private readonly options: PayloadCodecOptions) {
    this.inlineLimit = options.inlineLimitBytes ?? 16 * 1024;
    this.maxEvent = options.maxEventBytes ?? 300 * 1024;
    this.cacheEntries = options.cacheEntries ?? 500;
  }

  /** The store behind the references: the prompt builder reads a message's attachments from it too. */
  get blobStore(): BlobStore {
    return this.options.blobs;
  }

  redactText(text: string): string {
    return this.options.redactor.text(text);
  }

  /** A value as encode() will store it (redacted), e.g. to hash arguments before they are written. */
  redactJson(value: JsonValue): JsonValue {
    return this.options.redactor.json(value);
  }

  async encode(run: RunRef, value: JsonValue, checkpoints?: Checkpoints, force = false): Promise<Body> {
    const redacted = this.options.redactor.json(value);
    const json = JSON.stringify(redacted);
    const bytes = encoder.encode(json);
    if (!force && bytes.byteLength <= this.inlineLimit) return { kind: 'inline', value: redacted };
    const sha256 = sha256Hex(bytes);
    const key = blobKey(run, sha256);
    await checkpoints?.at('before-blob-put', key);
    await this.options.blobs.put(key, bytes, { contentType: 'application/json' });
    await checkpoints?.at('after-blob-put', key);
    this.remember(sha256, redacted);
    const text = typeof redacted === 'string' ? redacted : json;
    return { kind: 'blob', key, sha256, size: bytes.byteLength, summary: text.slice(0, 200) };
  }

  private async encodeBody(run: RunRef, body: Body, cp?: Checkpoints, force = false): Promise<Body> {
    return body.kind === 'inline' ? this.encode(run, body.value, cp, force) : body;
  }

  /** Redact and offload every body of a draft, then shrink it below the item limit if needed. */
  async encodeDraft(run: RunRef, draft: EventDraft, cp?: Checkpoints): Promise<EventDraft> {
    const d = structuredClone(draft) as EventDraft;
    await this.mapBodies(d, (b) => this.encodeBody(run, b, cp));
    if ('message' in d && typeof d.message === 'string') d.message = this.redactText(d.message).slice(0, 4000);
    if ('detail' in d && typeof d.detail === 'string') d.detail = this.redactText(d.detail).slice(0, 4000);
    if (d.type === 'cancel_requested' && d.reason !== undefined) d.reason = this.redactText(d.reason).slice(0, 4000);
    if (d.type === 'op_retry') d.error = { code: d.error.code, message: this.redactText(d.error.message).slice(0, 4000) };
    // A provider's parse error quotes the arguments it could not read.
    if (d.type === 'model_response') for (const c of d.calls) if (c.argsError !== undefined) c.argsError = this.redactText(c.argsError);
    // Many medium bodies can still add up past DynamoDB's 400 KB: offload the largest first.
    while (encoder.encode(JSON.stringify(d)).byteLength > this.maxEvent) {
      let largest: { size: number; body: Body } | undefined;
      await this.mapBodies(d, async (b) => {
        const size = b.kind === 'inline' ? JSON.stringify(b.value).length : 0;
        if (!largest || size > largest.size) largest = { size, body: b };
        return b;
      });
      const target = largest;
      if (!target || target.size === 0) break;
      await this.mapBodies(d, (b) => (b === target.body ? this.encodeBody(run, b, cp, true) : Promise.resolve(b)));
    }
    return d;
  }

  private async mapBodies(d: EventDraft, fn: (b: Body) => Promise<Body>): Promise<void> {
    switch (d.type) {
      case 'run_started':
        d.input = await fn(d.input);
        if (d.prompt) d.prompt.text = await fn(d.prompt.text);
        return;
      case 'model_response':
        if (d.text) d.text = await fn(d.text);
        for (const c of d.calls) c.args = await fn(c.args);
        if (d.output) d.output = await fn(d.output);
        return;
      case 'tool_result':
        d.output = await fn(d.output);
        return;
      case 'attention_resolved':
        if (d.result) d.result = await fn(d.result);
        return;
      case 'approval_decided':
        if (d.args) d.args = await fn(d.args);
        return;
      case 'user_message':
        d.input = await fn(d.input);
        return;
      case 'run_completed':
        d.answer = await fn(d.answer);
        if (d.output) d.output = await fn(d.output);
        return;
      case 'op_result':
        d.output = await fn(d.output);
        return;
      case 'op_started':
        if (d.wait?.kind === 'approval') d.wait.args = await fn(d.wait.args);
        if (d.wait?.kind === 'child') d.wait.input = await fn(d.wait.input);
        return;
      default:
        return;
    }
  }

  async resolve(body: Body): Promise<JsonValue> {
    if (body.kind === 'inline') return body.value;
    const cached = this.cache.get(body.sha256);
    if (cached !== undefined) return cached;
    // The store checks the bytes against the body's hash (BlobIntegrityError otherwise).
    const bytes = await this.options.blobs.get(body.key, { sha256: body.sha256 });
    const value = JSON.parse(decoder.decode(bytes)) as JsonValue;
    this.remember(body.sha256, value);
    return value;
  }

  async resolveText(body: Body | null): Promise<string> {
    if (!body) return '';
    const now = this.textNow(body);
    if (now !== undefined) return now;
    const value = await this.resolve(body);
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    this.texts.set(body, text);
    return text;
  }

  /**
   * The text of a body with no round trip, when there is one: inline, or resolved before (blob
   * texts are kept per body object: bodies are never changed in place, an edit gets a new one).
   * The prompt keeps each message's resolved copy (prompt.ts), so this runs once per body and
   * container, not once per turn.
   */
  textNow(body: Body | null): string | undefined {
    if (!body) return '';
    return body.kind === 'inline' ? inlineText(body) : this.texts.get(body);
  }

  private remember(sha256: string, value: JsonValue): void {
    if (this.cache.size >= this.cacheEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(sha256, value);
  }
}
