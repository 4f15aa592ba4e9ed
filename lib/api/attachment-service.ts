import type { AttachmentRef } from '../core/attachments.js';
import type { EngineDeps } from '../engine/engine.js';
import { readAttachment, storeAttachment, type AttachmentUpload } from '../engine/attachments.js';
import type { Caller } from './tenant.js';

/** The attachment routes' part of the RunService: uploads live under the caller's tenant. */
export interface AttachmentService {
  /** Check and store an upload (idempotent: the same bytes are the same reference). */
  upload(caller: Caller, upload: AttachmentUpload): Promise<AttachmentRef>;
  /** The bytes of an upload of the caller's tenant; BlobNotFoundError when it has none with that sha256. */
  attachment(caller: Caller, sha256: string): Promise<Uint8Array>;
}

export function engineAttachmentService(deps: Pick<EngineDeps, 'blobs'>): AttachmentService {
  return {
    upload: (caller, upload) => storeAttachment(deps.blobs, caller.tenant, upload),
    attachment: (caller, sha256) => readAttachment(deps.blobs, caller.tenant, sha256),
  };
}
