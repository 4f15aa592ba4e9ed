/**
 * Object storage for large payloads and snapshots. Keys are content-addressed by the payload
 * codec, so a repeated put of the same key is harmless (no conditional writes needed).
 */
export interface BlobStore {
  put(key: string, bytes: Uint8Array, options?: { contentType?: string }): Promise<void>;
  /** Throws BlobNotFoundError when absent. */
  get(key: string): Promise<Uint8Array>;
}
