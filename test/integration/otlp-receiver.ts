import { createServer, type IncomingMessage, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP receiver decodes it, from JSON or protobuf alike. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code: number; message?: string };
  /** Names of the span's events. */
  events: string[];
  resource: Record<string, unknown>;
  /** How the request that carried it was encoded. */
  encoding: 'json' | 'protobuf';
}

export interface OtlpReceiver {
  /** Base URL (http://127.0.0.1:port); spans are POSTed to `${url}/v1/traces`. */
  url: string;
  spans: OtlpSpan[];
  requests: { json: number; protobuf: number };
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (a random port): decodes ExportTraceServiceRequest
 * bodies in both encodings the exporters send (application/json, application/x-protobuf; gzip or
 * not) and keeps every span it got, duplicates included. Protobuf is read by a small wire-format
 * decoder over the fields of opentelemetry/proto/trace/v1/trace.proto that a trace carries.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const requests = { json: 0, protobuf: 0 };
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        let body = await readBody(req);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const type = req.headers['content-type'] ?? '';
        if (type.startsWith('application/json')) {
          requests.json++;
          spans.push(...fromJson(JSON.parse(body.toString('utf8'))));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else if (type.startsWith('application/x-protobuf')) {
          requests.protobuf++;
          spans.push(...fromProtobuf(body));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } else {
          res.writeHead(415).end();
        }
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

// ---- OTLP JSON --------------------------------------------------------------------------------

type JsonAny = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values?: JsonAny[] } };
type JsonKv = { key: string; value: JsonAny };

function jsonValue(v: JsonAny): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}
const jsonAttrs = (kvs: JsonKv[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
/** OTLP JSON ids are hex; a base64 one (protobuf JSON mapping) is read too. */
const jsonId = (id: string | undefined, bytes: number) => (!id ? '' : new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(id) ? id : Buffer.from(id, 'base64').toString('hex'));

function fromJson(request: {
  resourceSpans?: {
    resource?: { attributes?: JsonKv[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        startTimeUnixNano: string | number;
        endTimeUnixNano: string | number;
        attributes?: JsonKv[];
        links?: { traceId: string; spanId: string; attributes?: JsonKv[] }[];
        status?: { code?: number; message?: string };
        events?: { name: string }[];
      }[];
    }[];
  }[];
}): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const parent = jsonId(s.parentSpanId, 8);
        out.push({
          traceId: jsonId(s.traceId, 16),
          spanId: jsonId(s.spanId, 8),
          ...(parent ? { parentSpanId: parent } : {}),
          name: s.name,
          kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: jsonAttrs(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: jsonId(l.traceId, 16), spanId: jsonId(l.spanId, 8), attributes: jsonAttrs(l.attributes) })),
          status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) },
          events: (s.events ?? []).map((e) => e.name),
          resource,
          encoding: 'json',
        });
      }
    }
  }
  return out;
}

// ---- OTLP protobuf ----------------------------------------------------------------------------

/** One protobuf message as field number → values (varints as bigint, length-delimited as bytes). */
type Fields = Map<number, (bigint | Buffer)[]>;

function decode(buf: Buffer): Fields {
  const fields: Fields = new Map();
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const byte = buf[i++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.readBigUInt64LE(i);
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      value = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 5) {
      value = BigInt(buf.readUInt32LE(i));
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field) ?? [];
    list.push(value);
    fields.set(field, list);
  }
  return fields;
}

const bytesOf = (f: Fields, n: number): Buffer[] => (f.get(n) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
const firstBytes = (f: Fields, n: number): Buffer | undefined => bytesOf(f, n)[0];
const str = (f: Fields, n: number): string => firstBytes(f, n)?.toString('utf8') ?? '';
const num = (f: Fields, n: number): bigint => {
  const v = f.get(n)?.[0];
  return typeof v === 'bigint' ? v : 0n;
};

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue (1: values). */
function anyValue(buf: Buffer): unknown {
  const f = decode(buf);
  if (f.has(1)) return str(f, 1);
  if (f.has(2)) return num(f, 2) !== 0n;
  if (f.has(3)) return Number(BigInt.asIntN(64, num(f, 3)));
  if (f.has(4)) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(num(f, 4));
    return b.readDoubleLE(0);
  }
  if (f.has(5)) return bytesOf(decode(firstBytes(f, 5) as Buffer), 1).map(anyValue);
  return undefined;
}

/** repeated KeyValue (1: key, 2: AnyValue). */
const pbAttrs = (kvs: Buffer[]) =>
  Object.fromEntries(
    kvs.map((kv) => {
      const f = decode(kv);
      const value = firstBytes(f, 2);
      return [str(f, 1), value ? anyValue(value) : undefined];
    }),
  );

/**
 * ExportTraceServiceRequest (1: ResourceSpans) → ResourceSpans (1: Resource{1: attributes},
 * 2: ScopeSpans) → ScopeSpans (2: Span) → Span (1 trace_id, 2 span_id, 4 parent_span_id, 5 name,
 * 6 kind, 7 start, 8 end, 9 attributes, 11 events{2 name}, 13 links{1,2,4}, 15 status{2 message, 3 code}).
 */
function fromProtobuf(body: Buffer): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  for (const rsBuf of bytesOf(decode(body), 1)) {
    const rs = decode(rsBuf);
    const resourceBuf = firstBytes(rs, 1);
    const resource = resourceBuf ? pbAttrs(bytesOf(decode(resourceBuf), 1)) : {};
    for (const ssBuf of bytesOf(rs, 2)) {
      for (const spanBuf of bytesOf(decode(ssBuf), 2)) {
        const s = decode(spanBuf);
        const parent = firstBytes(s, 4);
        const statusBuf = firstBytes(s, 15);
        const status = statusBuf ? decode(statusBuf) : new Map();
        const message = statusBuf ? str(status, 2) : '';
        out.push({
          traceId: firstBytes(s, 1)?.toString('hex') ?? '',
          spanId: firstBytes(s, 2)?.toString('hex') ?? '',
          ...(parent && parent.length > 0 ? { parentSpanId: parent.toString('hex') } : {}),
          name: str(s, 5),
          kind: Number(num(s, 6)),
          startNs: num(s, 7),
          endNs: num(s, 8),
          attributes: pbAttrs(bytesOf(s, 9)),
          links: bytesOf(s, 13).map((lb) => {
            const l = decode(lb);
            return { traceId: firstBytes(l, 1)?.toString('hex') ?? '', spanId: firstBytes(l, 2)?.toString('hex') ?? '', attributes: pbAttrs(bytesOf(l, 4)) };
          }),
          status: { code: Number(num(status, 3)), ...(message ? { message } : {}) },
          events: bytesOf(s, 11).map((eb) => str(decode(eb), 2)),
          resource,
          encoding: 'protobuf',
        });
      }
    }
  }
  return out;
}
