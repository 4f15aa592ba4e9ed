/**
 * Object storage for large payloads and snapshots. Keys are content-addressed by the payload
 * codec, so a repeated put of the same key is harmless (no conditional writes needed).
 */
export interface BlobStore {
  put(key: string, bytes: Uint8Array, options?: { contentType?: string }): Promise<void>;
  /**
   * Throws BlobNotFoundError when absent. With `sha256`, the bytes must hash to it: BlobIntegrityError
   * when they do not (the contract suite checks it), so the caller does not hash them again.
   */
  get(key: string, options?: { sha256?: string }): Promise<Uint8Array>;
}
