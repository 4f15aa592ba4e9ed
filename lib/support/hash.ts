import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/json.js';

/**
 * Content hashes: what run_started pins, blob keys, request fingerprints. Pure functions of their
 * input on node:crypto, so every layer (authoring, engine, models, adapters) may use them.
 */

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
