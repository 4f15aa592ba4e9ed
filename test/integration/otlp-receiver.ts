import { createServer, type IncomingMessage, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { metricsFromJson, metricsFromProtobuf, type OtlpHistogramPoint } from './otlp-metrics-decode.js';
import { spansFromJson, spansFromProtobuf, type OtlpSpan } from './otlp-trace-decode.js';

export type { OtlpSpan } from './otlp-trace-decode.js';
export type { OtlpHistogramPoint } from './otlp-metrics-decode.js';

/** One export request as it arrived (its headers, lower-cased, for the header variables' tests). */
export interface OtlpRequest {
  path: string;
  encoding: 'json' | 'protobuf';
  headers: Record<string, string | string[] | undefined>;
}

export interface OtlpReceiver {
  /** Base URL (http://127.0.0.1:port); spans are POSTed to `${url}/v1/traces`, metrics to `${url}/v1/metrics`. */
  url: string;
  spans: OtlpSpan[];
  metrics: OtlpHistogramPoint[];
  /** Trace requests by encoding (metrics requests are in `log`). */
  requests: { json: number; protobuf: number };
  log: OtlpRequest[];
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP receiver on 127.0.0.1 (a random port): decodes ExportTraceServiceRequest and
 * ExportMetricsServiceRequest bodies in both encodings the exporters send (application/json,
 * application/x-protobuf; gzip or not) at the paths the spec gives them, and keeps everything it
 * got, duplicates included. Any other path is a 404, so a URL built wrong loses its data visibly.
 * `prefix` serves the signals under a base path (`/otlp/v1/traces`), as some vendors do.
 */
export async function startOtlpReceiver(prefix = ''): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const metrics: OtlpHistogramPoint[] = [];
  const requests = { json: 0, protobuf: 0 };
  const log: OtlpRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        const signal = req.url === `${prefix}/v1/traces` ? 'traces' : req.url === `${prefix}/v1/metrics` ? 'metrics' : undefined;
        if (req.method !== 'POST' || !signal) {
          res.writeHead(404).end();
          return;
        }
        let body = await readBody(req);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const type = req.headers['content-type'] ?? '';
        const encoding = type.startsWith('application/json') ? 'json' : type.startsWith('application/x-protobuf') ? 'protobuf' : undefined;
        if (!encoding) {
          res.writeHead(415).end();
          return;
        }
        log.push({ path: req.url ?? '', encoding, headers: req.headers });
        if (signal === 'traces') {
          requests[encoding]++;
          spans.push(...(encoding === 'json' ? spansFromJson(JSON.parse(body.toString('utf8'))) : spansFromProtobuf(body)));
        } else {
          metrics.push(...(encoding === 'json' ? metricsFromJson(JSON.parse(body.toString('utf8'))) : metricsFromProtobuf(body)));
        }
        if (encoding === 'json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    spans,
    metrics,
    requests,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
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
