import { inflateRawSync } from 'node:zlib';
import type { Inflate } from '../core/zip-check.js';

/**
 * Raw deflate (a zip entry's data) inflated with zlib, never past `maxBytes`: zlib stops and
 * throws at the cap, so a zip bomb costs at most the bytes its directory admits to. Undefined
 * for corrupt data or data that would expand further.
 */
export const inflateCapped: Inflate = (deflated, maxBytes) => {
  try {
    return inflateRawSync(deflated, { maxOutputLength: maxBytes });
  } catch {
    return undefined;
  }
};
