import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { BlobNotFoundError } from '../../core/errors.js';
import { sha256Hex } from '../../support/hash.js';
import { checkBlob } from '../blob-integrity.js';
import type { BlobStore } from '../../ports/blob-store.js';
import { DEFAULT_RETRY, errorName, withRetry, type RetryOptions } from './aws-errors.js';

export interface S3BlobStoreOptions {
  s3: S3Client;
  bucket: string;
  retry?: Partial<RetryOptions>;
}

export { sha256FromKey } from '../blob-integrity.js';
export { sha256Hex };

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
    checkBlob(key, bytes, options?.sha256, metadataSha);
    return bytes;
  }
}
