// S3 blob store details beyond the contract: the sha256 it stores and checks, on fauxqs.
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore, sha256FromKey, sha256Hex } from '../../lib/adapters/aws/s3-blob-store.js';
import { BlobIntegrityError } from '../../lib/core/errors.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';

describe.runIf(endpointsFor('dynalite'))('S3 blob store on fauxqs', () => {
  let stack: TestStack;
  let blobs: S3BlobStore;
  beforeAll(async () => {
    stack = await createTestStack('dynalite', 's3-it');
    blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
  });
  afterAll(async () => {
    await stack.dispose();
  });

  it('stores the content type and the sha256 with every object', async () => {
    const bytes = new TextEncoder().encode('{"a":1}');
    await blobs.put('snapshots/t/r/0000000050-abc.json', bytes, { contentType: 'application/json' });
    const head = await stack.clients.s3.send(new HeadObjectCommand({ Bucket: stack.resources.bucket, Key: 'snapshots/t/r/0000000050-abc.json' }));
    expect(head.ContentType).toBe('application/json');
    expect(head.Metadata?.sha256).toBe(sha256Hex(bytes));
  });

  it('checks bytes against the expected hash given, else the stored one, when the key carries none', async () => {
    const key = 'snapshots/t/r/0000000100-def.json';
    const bytes = new TextEncoder().encode('{"state":true}');
    await blobs.put(key, bytes);
    expect(await blobs.get(key, { sha256: sha256Hex(bytes) })).toEqual(bytes);
    await expect(blobs.get(key, { sha256: 'f'.repeat(64) })).rejects.toBeInstanceOf(BlobIntegrityError);
    // Bytes replaced behind the store's back but the old metadata kept: caught by the stored hash.
    await stack.clients.s3.send(
      new PutObjectCommand({ Bucket: stack.resources.bucket, Key: key, Body: new TextEncoder().encode('{"state":false}'), Metadata: { sha256: sha256Hex(bytes) } }),
    );
    await expect(blobs.get(key)).rejects.toBeInstanceOf(BlobIntegrityError);
  });

  it('reads the content address from the last key segment', () => {
    const h = 'a'.repeat(64);
    expect(sha256FromKey(`blobs/t/r/${h}.json`)).toBe(h);
    expect(sha256FromKey(h)).toBe(h);
    expect(sha256FromKey(`blobs/t/${h}/other.json`)).toBeUndefined();
    expect(sha256FromKey('snapshots/t/r/0000000100-abcdef.json')).toBeUndefined();
  });
});
