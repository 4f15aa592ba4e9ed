import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { BlobIntegrityError, BlobNotFoundError } from '../../core/errors.js';
import type { BlobStore } from '../../ports/blob-store.js';
import { DEFAULT_RETRY, errorName, withRetry, type RetryOptions } from './aws-errors.js';

export interface S3BlobStoreOptions {
  s3: S3Client;
  bucket: string;
  retry?: Partial<RetryOptions>;
}

/** A 64-hex sha256 as the last path segment (optionally with an extension) names the content. */
const KEY_HASH = /(?:^|\/)([0-9a-f]{64})(?:\.[A-Za-z0-9]+)?$/;

export function sha256FromKey(key: string): string | undefined {
  return KEY_HASH.exec(key)?.[1];
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Blobs in S3 under content-addressed keys (a repeated put is harmless, so no conditional write
 * is needed; emulators ignore If-None-Match anyway). Every object carries its sha256 in metadata,
 * and a get checks the bytes against the expected hash: the one given, else the one the key
 * carries, else the stored metadata. Missing → BlobNotFoundError; mismatch → BlobIntegrityError.
 */
export class S3BlobStore implements BlobStore {
  readonly stats = { requests: 0, puts: 0, gets: 0, bytesWritten: 0 };
  private readonly retry: RetryOptions;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  async put(key: string, bytes: Uint8Array, options?: { contentType?: string }): Promise<void> {
    const sha256 = sha256Hex(bytes);
    this.stats.puts++;
    await withRetry('blobPut', this.retry, () => {
      this.stats.requests++;
      return this.options.s3.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: options?.contentType ?? 'application/octet-stream',
          Metadata: { sha256 },
        }),
      );
    });
    this.stats.bytesWritten += bytes.byteLength;
  }

  async get(key: string, options?: { sha256?: string }): Promise<Uint8Array> {
    this.stats.gets++;
    const { bytes, metadataSha } = await withRetry('blobGet', this.retry, async () => {
      this.stats.requests++;
      try {
        const out = await this.options.s3.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
        // Read the body inside the retry: a stream cut mid-way is retried like any transient error.
        const body = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
        return { bytes: body, metadataSha: out.Metadata?.sha256 };
      } catch (error) {
        if (errorName(error) === 'NoSuchKey' || errorName(error) === 'NotFound') throw new BlobNotFoundError(key);
        throw error;
      }
    });
    const expected = options?.sha256 ?? sha256FromKey(key) ?? metadataSha;
    if (expected !== undefined) {
      const actual = sha256Hex(bytes);
      if (actual !== expected) throw new BlobIntegrityError(key, expected, actual);
    }
    return bytes;
  }
}
