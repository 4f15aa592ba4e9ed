import { BlobNotFoundError } from '../../core/errors.js';
import { checkBlob } from '../blob-integrity.js';
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
    // The rule the S3 adapter follows: the sha256 asked for, or the one a content-addressed key names.
    checkBlob(key, bytes, options?.sha256);
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
