import { createHash } from 'node:crypto';
import { BlobIntegrityError, BlobNotFoundError } from '../../core/errors.js';
import type { BlobStore } from '../../ports/blob-store.js';

export class MemoryBlobStore implements BlobStore {
  private readonly objects = new Map<string, Uint8Array>();
  readonly stats = { puts: 0, gets: 0, bytesWritten: 0 };

  async put(key: string, bytes: Uint8Array): Promise<void> {
    this.stats.puts++;
    this.stats.bytesWritten += bytes.byteLength;
    this.objects.set(key, new Uint8Array(bytes));
  }

  async get(key: string, options?: { sha256?: string }): Promise<Uint8Array> {
    this.stats.gets++;
    const bytes = this.objects.get(key);
    if (!bytes) throw new BlobNotFoundError(key);
    // Like the S3 adapter: the sha256 asked for, or the one a content-addressed key names.
    const expected = options?.sha256 ?? /([0-9a-f]{64})\.json$/.exec(key)?.[1];
    if (expected) {
      const actual = createHash('sha256').update(bytes).digest('hex');
      if (actual !== expected) throw new BlobIntegrityError(key, expected, actual);
    }
    return new Uint8Array(bytes);
  }

  /** Test hooks. */
  keys(): string[] {
    return [...this.objects.keys()];
  }
  tamper(key: string, bytes: Uint8Array): void {
    this.objects.set(key, bytes);
  }
  remove(key: string): void {
    this.objects.delete(key);
  }
}
