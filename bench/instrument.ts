import type { AwsClients } from '../lib/adapters/aws/aws-clients.js';

/**
 * Request and capacity counters for one set of AWS SDK clients, read by the benchmark. Middleware
 * on the real clients (no wrapper around the adapters): every DynamoDB request asks for
 * ReturnConsumedCapacity=INDEXES, so DynamoDB Local reports the write and read units it would bill,
 * GSI copies included. dynalite reports table units only (`gsiReported` stays false).
 */
export interface Counters {
  dynamo: { requests: number; writes: number; reads: number; wru: number; rru: number; gsiWru: number };
  sqs: { requests: number; byCommand: Record<string, number> };
  s3: { puts: number; gets: number; other: number };
  gsiReported: boolean;
}

export function emptyCounters(): Counters {
  return {
    dynamo: { requests: 0, writes: 0, reads: 0, wru: 0, rru: 0, gsiWru: 0 },
    sqs: { requests: 0, byCommand: {} },
    s3: { puts: 0, gets: 0, other: 0 },
    gsiReported: false,
  };
}

export function snapshot(c: Counters): Counters {
  return structuredClone(c);
}

/** after - before, field by field. */
export function diff(after: Counters, before: Counters): Counters {
  const out = emptyCounters();
  for (const k of Object.keys(out.dynamo) as (keyof Counters['dynamo'])[]) out.dynamo[k] = after.dynamo[k] - before.dynamo[k];
  out.sqs.requests = after.sqs.requests - before.sqs.requests;
  for (const [k, v] of Object.entries(after.sqs.byCommand)) out.sqs.byCommand[k] = v - (before.sqs.byCommand[k] ?? 0);
  out.s3 = { puts: after.s3.puts - before.s3.puts, gets: after.s3.gets - before.s3.gets, other: after.s3.other - before.s3.other };
  out.gsiReported = after.gsiReported;
  return out;
}

export function add(into: Counters, more: Counters): void {
  for (const k of Object.keys(into.dynamo) as (keyof Counters['dynamo'])[]) into.dynamo[k] += more.dynamo[k];
  into.sqs.requests += more.sqs.requests;
  for (const [k, v] of Object.entries(more.sqs.byCommand)) into.sqs.byCommand[k] = (into.sqs.byCommand[k] ?? 0) + v;
  into.s3.puts += more.s3.puts;
  into.s3.gets += more.s3.gets;
  into.s3.other += more.s3.other;
  into.gsiReported ||= more.gsiReported;
}

const DYNAMO_READS = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand', 'ScanCommand']);
const DYNAMO_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);

interface CapacityLike {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

type Handler = (args: { input: Record<string, unknown> }) => Promise<{ output: Record<string, unknown> }>;
type Mw = (next: Handler, context: { commandName?: string }) => Handler;
interface Stackable {
  middlewareStack: { add(mw: Mw, options: { step: 'initialize'; name: string }): void };
}

/** Attach the counters to the clients (once per client). */
export function instrument(clients: AwsClients, counters: Counters): void {
  (clients.dynamodb as unknown as Stackable).middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      const data = DYNAMO_READS.has(name) || DYNAMO_WRITES.has(name);
      if (data) args.input.ReturnConsumedCapacity = 'INDEXES';
      counters.dynamo.requests++;
      if (DYNAMO_READS.has(name)) counters.dynamo.reads++;
      if (DYNAMO_WRITES.has(name)) counters.dynamo.writes++;
      const result = await next(args).catch((error: unknown) => {
        // A failed conditional write is billed too; its error carries no capacity: count 1 unit.
        if (DYNAMO_WRITES.has(name)) counters.dynamo.wru += 1;
        throw error;
      });
      const consumed = result.output.ConsumedCapacity as CapacityLike | CapacityLike[] | undefined;
      for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
        const total = c.CapacityUnits ?? 0;
        const gsi = Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((s, g) => s + (g.CapacityUnits ?? 0), 0);
        if (c.GlobalSecondaryIndexes) counters.gsiReported = true;
        if (DYNAMO_WRITES.has(name)) {
          counters.dynamo.wru += total;
          counters.dynamo.gsiWru += gsi;
        } else counters.dynamo.rru += total;
      }
      return result;
    },
    { step: 'initialize', name: 'benchCounters' },
  );
  (clients.sqs as unknown as Stackable).middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      let name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      // Empty long-poll receives are the pollers' idle cost (a fixed monthly line), not a turn's.
      const empty = name === 'ReceiveMessage' && !((result.output.Messages as unknown[] | undefined)?.length);
      if (empty) name = 'ReceiveMessage (empty)';
      else counters.sqs.requests++;
      counters.sqs.byCommand[name] = (counters.sqs.byCommand[name] ?? 0) + 1;
      return result;
    },
    { step: 'initialize', name: 'benchCounters' },
  );
  (clients.s3 as unknown as Stackable).middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      if (name === 'PutObjectCommand') counters.s3.puts++;
      else if (name === 'GetObjectCommand') counters.s3.gets++;
      else counters.s3.other++;
      return next(args);
    },
    { step: 'initialize', name: 'benchCounters' },
  );
}
