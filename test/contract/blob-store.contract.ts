import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobIntegrityError, BlobNotFoundError } from '../../lib/core/errors.js';
import type { BlobStore } from '../../lib/ports/blob-store.js';

export interface BlobStoreUnderTest {
  blobs: BlobStore;
  /** Replace the stored bytes behind the store's back (bit rot, a bad writer). */
  tamper(key: string, bytes: Uint8Array): Promise<void>;
  dispose(): Promise<void>;
}

export interface BlobStoreTarget {
  name: string;
  available: boolean;
  /** The S3 adapter checks sha256 on read; the memory fake leaves it to the payload codec. */
  verifiesIntegrity: boolean;
  setup(): Promise<BlobStoreUnderTest>;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const contentKey = (bytes: Uint8Array) => `blobs/tenant-a/run-${randomBytes(3).toString('hex')}/${sha256(bytes)}.json`;

export function blobStoreContract(target: BlobStoreTarget): void {
  describe.runIf(target.available)(`BlobStore contract: ${target.name}`, () => {
    let sut: BlobStoreUnderTest;
    beforeAll(async () => {
      sut = await target.setup();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    it('round-trips bytes exactly, binary and multi-megabyte included', async () => {
      const binary = new Uint8Array([0, 255, 1, 254, 0, 0, 10, 13]);
      const large = new Uint8Array(randomBytes(3 * 1024 * 1024));
      for (const bytes of [binary, large, new Uint8Array()]) {
        const key = contentKey(bytes);
        await sut.blobs.put(key, bytes, { contentType: 'application/octet-stream' });
        const back = await sut.blobs.get(key);
        expect(back.byteLength).toBe(bytes.byteLength);
        expect(sha256(back)).toBe(sha256(bytes));
      }
    });

    it('takes a repeated put of the same content-addressed key harmlessly', async () => {
      const bytes = new TextEncoder().encode(JSON.stringify({ answer: 42 }));
      const key = contentKey(bytes);
      await sut.blobs.put(key, bytes);
      await sut.blobs.put(key, bytes);
      expect(new TextDecoder().decode(await sut.blobs.get(key))).toBe('{"answer":42}');
    });

    it('reports a missing blob with BlobNotFoundError', async () => {
      await expect(sut.blobs.get(`blobs/tenant-a/none/${'0'.repeat(64)}.json`)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(sut.blobs.get('snapshots/none.json')).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    it('checks the bytes against the sha256 a reader names, on any key', async () => {
      // A snapshot's key is not its hash: the loader names the hash its pointer holds.
      const bytes = new TextEncoder().encode('{"state":true}');
      const key = `snapshots/tenant-a/run-${randomBytes(3).toString('hex')}/0000000007.json`;
      await sut.blobs.put(key, bytes);
      expect(sha256(await sut.blobs.get(key, { sha256: sha256(bytes) }))).toBe(sha256(bytes));
      const read = sut.blobs.get(key, { sha256: 'f'.repeat(64) });
      await expect(read).rejects.toBeInstanceOf(BlobIntegrityError);
      await expect(read).rejects.toMatchObject({ key, expected: 'f'.repeat(64) });
      await sut.tamper(key, new TextEncoder().encode('{"state":false}'));
      await expect(sut.blobs.get(key, { sha256: sha256(bytes) })).rejects.toBeInstanceOf(BlobIntegrityError);
    });

    it.runIf(target.verifiesIntegrity)('refuses content that does not match its content address', async () => {
      const bytes = new TextEncoder().encode('the real payload');
      const key = contentKey(bytes);
      await sut.blobs.put(key, bytes);
      await sut.tamper(key, new TextEncoder().encode('a tampered payload'));
      const read = sut.blobs.get(key);
      await expect(read).rejects.toBeInstanceOf(BlobIntegrityError);
      await expect(read).rejects.toMatchObject({ key, expected: sha256(bytes) });
    });
  });
}
