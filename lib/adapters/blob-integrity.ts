import { BlobIntegrityError } from '../core/errors.js';
import { sha256Hex } from '../support/hash.js';

/** A 64-hex sha256 as the last path segment (optionally with an extension) names the content. */
const KEY_HASH = /(?:^|\/)([0-9a-f]{64})(?:\.[A-Za-z0-9]+)?$/;

export function sha256FromKey(key: string): string | undefined {
  return KEY_HASH.exec(key)?.[1];
}

/**
 * The BlobStore rule every store follows on a read: the bytes must hash to the sha256 the reader
 * names, else to the one a content-addressed key carries (else to `fallback`, what the store kept
 * beside them). BlobIntegrityError when they do not.
 */
export function checkBlob(key: string, bytes: Uint8Array, named: string | undefined, fallback?: string): void {
  const expected = named ?? sha256FromKey(key) ?? fallback;
  if (expected === undefined) return;
  const actual = sha256Hex(bytes);
  if (actual !== expected) throw new BlobIntegrityError(key, expected, actual);
}
