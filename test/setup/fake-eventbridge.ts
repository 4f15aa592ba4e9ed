import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PutEntry {
  Source: string;
  DetailType: string;
  EventBusName: string;
  Detail: string;
}

/**
 * A stand-in for the EventBridge endpoint (no emulator covers it): the real SDK client talks to it
 * over HTTP, on 127.0.0.1; it answers PutEvents and records the entries. Close `server` when done.
 */
export function fakeEventBridge(): Promise<{ server: Server; url: string; entries: PutEntry[] }> {
  const entries: PutEntry[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (req.headers['x-amz-target'] === 'AWSEvents.PutEvents') {
        const parsed = JSON.parse(body) as { Entries: PutEntry[] };
        entries.push(...parsed.Entries);
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ FailedEntryCount: 0, Entries: parsed.Entries.map((_, i) => ({ EventId: `e-${entries.length}-${i}` })) }));
      } else {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'UnknownOperationException' }));
      }
    });
  });
  // Never what keeps a process alive.
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, entries })),
  );
}
