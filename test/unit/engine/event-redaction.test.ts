/**
 * Issue 33: one redaction step for every field of every event and inbox item. Each event type and
 * inbox item kind has a sample with a secret in every field that can hold text (bodies, comments,
 * reasons, messages, details, principals, parse errors) and real values in the structural ones
 * (ids, hashes, enums, pinned contracts). Every corpus entry goes through each sample: no secret
 * is left, the structure is byte for byte the same, and the event still parses. The samples are
 * checked against the schemas, so a field added to an event must be added here (and is redacted
 * by the codec without a case of its own).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryBlobStore } from '../../../lib/adapters/memory/memory-blob-store.js';
import { eventSchema, parseEvent, type EventDraft, type EventType } from '../../../lib/core/events.js';
import { inboxItemSchema, type InboxItem } from '../../../lib/core/inbox.js';
import { Redactor } from '../../../lib/core/redaction.js';
import { PayloadCodec } from '../../../lib/engine/payload-codec.js';
import { SECRET_CORPUS } from '../../fixtures/secret-corpus.js';
import { eventSamples } from '../../fixtures/event-samples.js';

const H = 'a'.repeat(64);
const run = { tenant: 't', runId: 'r-1' };

/** Each inbox item kind, every field present. */
function inboxSamples(s: string): InboxItem[] {
  return [
    { id: 'i-1', kind: 'cancel', by: `ops ${s}`, reason: `stop: ${s}` },
    { id: 'i-2', kind: 'resolve', by: `ops ${s}`, callId: '3-0', outcome: 'succeeded', result: { note: s } },
    { id: 'i-3', kind: 'run_action', by: `ops ${s}`, action: 'retry' },
    { id: 'approval-3-0', kind: 'approval', by: `alice ${s}`, callId: '3-0', decision: 'edit', args: { note: s }, argsHash: H, comment: `no: ${s}` },
    {
      id: 'child-3-0',
      kind: 'complete_call',
      by: `run:${s}`,
      callId: '3-0',
      via: 'child',
      signal: 'code',
      childRunId: 'child-1',
      usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.001 },
      ok: true,
      output: { answer: s },
      body: { kind: 'blob', key: 'blobs/t/r-1/x.json', sha256: H, size: 10, summary: 'a summary' },
    },
    { id: 'message-1', kind: 'message', by: `alice ${s}`, input: s },
  ];
}

/** Keys of the schema's objects the sample leaves out (so a field added to an event is added here). */
function missingKeys(schema: z.ZodType, value: unknown, path: string): string[] {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return value == null ? [] : missingKeys(schema.unwrap() as z.ZodType, value, path);
  if (schema instanceof z.ZodArray)
    return Array.isArray(value) && value.length > 0 ? missingKeys(schema.element as z.ZodType, value[0], `${path}[0]`) : [`${path}[0]`];
  if (schema instanceof z.ZodDiscriminatedUnion || schema instanceof z.ZodUnion) {
    const option = (schema.options as z.ZodType[]).find((o) => o.safeParse(value).success);
    return option ? missingKeys(option, value, path) : [`${path} (no option fits)`];
  }
  if (!(schema instanceof z.ZodObject)) return [];
  const record = (value ?? {}) as Record<string, unknown>;
  return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([k, child]) =>
    // A body is one field (its value is any JSON); the writer's own fields come with the append.
    ['v', 'seq', 'at', 'by'].includes(k) && path === '' ? [] : record[k] === undefined ? [`${path}.${k}`] : missingKeys(child, record[k], `${path}.${k}`),
  );
}

/** Every string leaf: [path, value]. */
function leaves(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, `${path}.${k}`));
  return [];
}

const MARK = 'SECRET-MARK';

describe('one redaction step for every field of every event and inbox item', () => {
  const codec = new PayloadCodec({ blobs: new MemoryBlobStore(), redactor: new Redactor() });

  it('the samples cover every event type and inbox kind, and every field of each', () => {
    const events = eventSamples(MARK);
    const types = eventSchema.options.map((o) => o.shape.type.value);
    expect(Object.keys(events).sort()).toEqual([...types].sort());
    for (const option of eventSchema.options) {
      const draft = events[option.shape.type.value];
      expect(missingKeys(option, { ...draft, v: 1, seq: 1, at: 0, by: { epoch: 1, nonce: 'n' } }, ''), option.shape.type.value).toEqual([]);
    }
    const items = inboxSamples(MARK);
    expect(items.map((i) => i.kind).sort()).toEqual(inboxItemSchema.options.map((o) => o.shape.kind.value).sort());
    for (const item of items) expect(missingKeys(inboxItemSchema, item, item.kind), item.kind).toEqual([]);
  });

  it(`every corpus entry (${SECRET_CORPUS.length}) in every text field of every event: gone, the structure unchanged, the event still valid`, async () => {
    let checks = 0;
    const fields = new Set<string>();
    for (const entry of SECRET_CORPUS) {
      for (const [type, draft] of Object.entries(eventSamples(entry.text))) {
        const encoded = await codec.encodeDraft(run, draft);
        const json = JSON.stringify(encoded);
        for (const secret of entry.secrets) expect(json.includes(secret), `${entry.name} in ${type}: ${json}`).toBe(false);
        // Structure: every leaf the secret was not put in is exactly as it was.
        const before = new Map(leaves(draft));
        const marked = new Map(leaves(eventSamples(MARK)[type as EventType]));
        for (const [path, value] of leaves(encoded)) {
          if (marked.get(path)?.includes(MARK)) {
            fields.add(`${type}${path}`);
            checks += entry.secrets.length;
          } else expect(value, `${type}${path}`).toBe(before.get(path));
        }
        expect(() => parseEvent({ ...encoded, v: 1, seq: 5, at: 0, by: { epoch: 1, nonce: 'n' } })).not.toThrow();
      }
    }
    // The fields a secret was put in (bodies count by their value's leaves).
    expect(fields.size).toBeGreaterThanOrEqual(25);
    console.log(
      `event fields: ${fields.size} text fields of ${Object.keys(eventSamples('')).length} event types x ${SECRET_CORPUS.length} entries = ${checks} (secret x field) checks`,
    );
  });

  it('every corpus entry in every field of every inbox item (the form it waits in the store in)', () => {
    let checks = 0;
    for (const entry of SECRET_CORPUS) {
      for (const item of inboxSamples(entry.text)) {
        const stored = codec.inboxItem(item);
        const json = JSON.stringify(stored);
        for (const secret of entry.secrets) expect(json.includes(secret), `${entry.name} in inbox ${item.kind}: ${json}`).toBe(false);
        checks += entry.secrets.length;
        expect(inboxItemSchema.safeParse(stored).success).toBe(true);
        const marked = inboxSamples(MARK).find((i) => i.id === item.id)!;
        for (const [path, value] of leaves(stored))
          if (!new Map(leaves(marked)).get(path)?.includes(MARK)) expect(value, `${item.kind}${path}`).toBe(new Map(leaves(item)).get(path));
        // Stored twice is stored the same (a client's retry compares equal).
        expect(codec.inboxItem(stored)).toEqual(stored);
      }
    }
    expect(checks).toBeGreaterThan(SECRET_CORPUS.length * 6);
  });

  it('long free text is bounded after redaction; ids, hashes and tool contracts are never touched', async () => {
    const long = `${'x'.repeat(5000)} AKIAIOSFODNN7EXAMPLE`;
    const failed = (await codec.encodeDraft(run, { type: 'run_failed', code: 'c', message: long })) as { message: string };
    expect(failed.message).toHaveLength(4000);
    const comment = (await codec.encodeDraft(run, {
      type: 'approval_decided',
      callId: '3-0',
      decision: 'reject',
      argsHash: H,
      comment: long,
      decidedBy: 'a',
    })) as { comment: string };
    expect(comment.comment).toHaveLength(4000);
    // A pinned tool schema that looks like a secret stays byte for byte (its hash is the pin).
    const tools = [
      {
        name: 'lookup',
        version: '1',
        description: 'password=hunter2',
        inputSchema: { type: 'object', examples: ['AKIAIOSFODNN7EXAMPLE'] },
        schemaHash: H,
        policy: 'rerun' as const,
        timeoutMs: 1000,
      },
    ];
    const started = await codec.encodeDraft(run, { ...(eventSamples('x').run_started as Extract<EventDraft, { type: 'run_started' }>), tools });
    expect((started as { tools: unknown }).tools).toEqual(tools);
  });
});
