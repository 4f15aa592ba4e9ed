import { randomBytes, randomUUID } from 'node:crypto';
import type { Ids } from '../../ports/ids.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** ULIDs (48-bit time, 80-bit randomness, monotonic within a millisecond) and UUID nonces. */
export class CryptoIds implements Ids {
  private lastTime = -1;
  private lastRandom = new Uint8Array(10);

  constructor(private readonly now: () => number = Date.now) {}

  nonce(): string {
    return randomUUID();
  }

  inboxId(): string {
    const time = this.now();
    if (time === this.lastTime) {
      // Increment the previous randomness so ids stay ordered within one millisecond.
      for (let i = this.lastRandom.length - 1; i >= 0; i--) {
        const byte = this.lastRandom[i] ?? 0;
        this.lastRandom[i] = (byte + 1) & 0xff;
        if (byte !== 0xff) break;
      }
    } else {
      this.lastTime = time;
      this.lastRandom = new Uint8Array(randomBytes(10));
    }
    return encodeTime(time) + encodeRandom(this.lastRandom);
  }
}

function encodeTime(time: number): string {
  let out = '';
  let t = time;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < 16; i++) {
    out = CROCKFORD[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return out;
}
