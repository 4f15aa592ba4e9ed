import { bytesOf, decode, doubleOf, firstBytes, fixed64s, jsonAttrs, num, pbAttrs, str, type Fields, type JsonKv } from './otlp-wire.js';

/** One histogram data point as an OTLP receiver decodes it, from JSON or protobuf alike. */
export interface OtlpHistogramPoint {
  /** The metric's name and unit. */
  name: string;
  unit: string;
  /** 1 delta, 2 cumulative (AggregationTemporality). */
  temporality: number;
  attributes: Record<string, unknown>;
  count: number;
  sum: number;
  explicitBounds: number[];
  bucketCounts: number[];
  resource: Record<string, unknown>;
  /** The instrumentation scope's name. */
  scope: string;
  encoding: 'json' | 'protobuf';
}

type JsonPoint = { attributes?: JsonKv[]; count?: string | number; sum?: number; explicitBounds?: number[]; bucketCounts?: (string | number)[] };

/** ExportMetricsServiceRequest in OTLP JSON: the histograms (Logbook sends no other kind). */
export function metricsFromJson(request: {
  resourceMetrics?: {
    resource?: { attributes?: JsonKv[] };
    scopeMetrics?: { scope?: { name?: string }; metrics?: { name: string; unit?: string; histogram?: { dataPoints?: JsonPoint[]; aggregationTemporality?: number } }[] }[];
  }[];
}): OtlpHistogramPoint[] {
  const out: OtlpHistogramPoint[] = [];
  for (const rm of request.resourceMetrics ?? []) {
    const resource = jsonAttrs(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        for (const p of m.histogram?.dataPoints ?? []) {
          out.push({
            name: m.name,
            unit: m.unit ?? '',
            temporality: m.histogram?.aggregationTemporality ?? 0,
            attributes: jsonAttrs(p.attributes),
            count: Number(p.count ?? 0),
            sum: p.sum ?? 0,
            explicitBounds: p.explicitBounds ?? [],
            bucketCounts: (p.bucketCounts ?? []).map(Number),
            resource,
            scope: sm.scope?.name ?? '',
            encoding: 'json',
          });
        }
      }
    }
  }
  return out;
}

/**
 * ExportMetricsServiceRequest (1: ResourceMetrics) → ResourceMetrics (1: Resource, 2: ScopeMetrics)
 * → ScopeMetrics (1: scope{1 name}, 2: Metric) → Metric (1 name, 3 unit, 9 Histogram) → Histogram
 * (1: HistogramDataPoint, 2 aggregation_temporality) → HistogramDataPoint (9 attributes, 4 count
 * fixed64, 5 sum double, 6 bucket_counts fixed64s, 7 explicit_bounds doubles).
 */
export function metricsFromProtobuf(body: Buffer): OtlpHistogramPoint[] {
  const out: OtlpHistogramPoint[] = [];
  for (const rmBuf of bytesOf(decode(body), 1)) {
    const rm = decode(rmBuf);
    const resourceBuf = firstBytes(rm, 1);
    const resource = resourceBuf ? pbAttrs(bytesOf(decode(resourceBuf), 1)) : {};
    for (const smBuf of bytesOf(rm, 2)) {
      const sm = decode(smBuf);
      const scopeBuf = firstBytes(sm, 1);
      const scope = scopeBuf ? str(decode(scopeBuf), 1) : '';
      for (const mBuf of bytesOf(sm, 2)) {
        const m = decode(mBuf);
        const histogramBuf = firstBytes(m, 9);
        if (!histogramBuf) continue;
        const h = decode(histogramBuf);
        for (const pBuf of bytesOf(h, 1)) {
          const p: Fields = decode(pBuf);
          out.push({
            name: str(m, 1),
            unit: str(m, 3),
            temporality: Number(num(h, 2)),
            attributes: pbAttrs(bytesOf(p, 9)),
            count: Number(fixed64s(p, 4)[0] ?? 0n),
            sum: doubleOf(fixed64s(p, 5)[0] ?? 0n),
            explicitBounds: fixed64s(p, 7).map(doubleOf),
            bucketCounts: fixed64s(p, 6).map(Number),
            resource,
            scope,
            encoding: 'protobuf',
          });
        }
      }
    }
  }
  return out;
}
