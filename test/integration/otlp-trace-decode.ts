import { bytesOf, decode, firstBytes, jsonAttrs, jsonId, num, pbAttrs, str, type JsonKv } from './otlp-wire.js';

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

/** ExportTraceServiceRequest in OTLP JSON. */
export function spansFromJson(request: {
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

/**
 * ExportTraceServiceRequest (1: ResourceSpans) → ResourceSpans (1: Resource{1: attributes},
 * 2: ScopeSpans) → ScopeSpans (2: Span) → Span (1 trace_id, 2 span_id, 4 parent_span_id, 5 name,
 * 6 kind, 7 start, 8 end, 9 attributes, 11 events{2 name}, 13 links{1,2,4}, 15 status{2 message, 3 code}).
 */
export function spansFromProtobuf(body: Buffer): OtlpSpan[] {
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
