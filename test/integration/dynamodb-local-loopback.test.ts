// DynamoDB Local listens on 127.0.0.1 only: the kernel's own table of listening sockets is read,
// so the test does not depend on this machine having another interface to probe from.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { javaAvailable, startDynamoDbLocal } from '../../dev/local/dynamodb-local.js';

/** The local addresses of the TCP sockets listening on `port` (Linux /proc/net/tcp, tcp6). */
function listeners(port: number): string[] {
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue; // 0A: LISTEN
      const [hex, portHex] = local.split(':');
      if (Number.parseInt(portHex ?? '', 16) === port) found.push(decode(hex ?? ''));
    }
  }
  return found;
}

/** /proc's little-endian hex address: 0100007F is 127.0.0.1, all zeros the wildcard. */
function decode(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  if (/^0+$/.test(hex)) return '::';
  if (hex === '00000000000000000000000001000000') return '::1';
  if (hex.startsWith('0000000000000000FFFF0000')) return `::ffff:${decode(hex.slice(24))}`;
  return hex;
}

const linux = process.platform === 'linux';

describe.skipIf(!linux || !javaAvailable())('DynamoDB Local on this machine', () => {
  it('listens on 127.0.0.1 and on no other address', async () => {
    const ddb = await startDynamoDbLocal();
    try {
      const port = Number(new URL(ddb.endpoint).port);
      const addresses = listeners(port);
      // Without the loopback launcher Jetty listens on the wildcard (0.0.0.0 or ::).
      expect(addresses.length).toBeGreaterThan(0);
      expect(addresses.every((a) => a === '127.0.0.1' || a === '::ffff:127.0.0.1'), addresses.join(', ')).toBe(true);
      // And it still answers DynamoDB's API there.
      const res = await fetch(ddb.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables', authorization: 'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00' },
        body: '{}',
      });
      expect(res.status).toBeLessThan(500);
    } finally {
      await ddb.stop();
    }
  }, 60_000);
});
