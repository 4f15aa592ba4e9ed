import type { AttachmentRef } from '../core/attachments.js';
import { storeAttachment, type AttachmentUpload } from '../engine/attachments.js';
import type { WorldStorage } from './world.js';

/**
 * Upload a file into a test world as `POST /attachments` does (same checks: allow-list, magic
 * bytes, size), and get the reference a run's input carries. Call it in a scenario's `world()`
 * before the run starts: every point of the crash harness gets a fresh world.
 */
export function uploadAttachment(storage: Pick<WorldStorage, 'blobs'>, tenant: string, upload: AttachmentUpload): Promise<AttachmentRef> {
  return storeAttachment(storage.blobs, tenant, upload);
}
