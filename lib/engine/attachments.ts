import {
  attachmentCandidates,
  attachmentKind,
  attachmentRefs,
  attachmentRefSchema,
  isAttachmentMediaType,
  labelProblem,
  signatureProblem,
  ATTACHMENT_MEDIA_TYPES,
  type AttachmentRef,
} from '../core/attachments.js';
import type { Body } from '../core/body.js';
import { AttachmentTooLargeError, BlobNotFoundError, UnsupportedMediaTypeError, ValidationError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import type { ModelAttachment } from '../core/messages.js';
import { zodIssues, type IssueText } from '../core/zod-issues.js';
import { sha256Hex } from '../support/hash.js';
import { inflateCapped } from '../support/inflate.js';
import { attachmentProblem } from '../models/model-capabilities.js';
import type { BlobStore } from '../ports/blob-store.js';
import { MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_MESSAGE } from '../core/limits.js';

/**
 * Attachments at the engine's edges: the upload (stored under the tenant by sha256), the check of
 * the references a run's input or a follow-up message carries (before anything is written), and
 * the bytes the prompt builder puts beside a user message (core/attachments.ts has the shapes).
 */

/** Where an upload lives: under its tenant (no other tenant can name it), by its content. */
export function attachmentKey(tenant: string, sha256: string): string {
  return `attachments/${tenant}/${sha256}`;
}

export interface AttachmentUpload {
  bytes: Uint8Array;
  /** The Content-Type the client sent, parameters already removed. */
  mediaType: string;
  name?: string;
}

/**
 * Check and store one upload; the same bytes again are the same key and the same answer. Refused:
 * a type off the allow-list or bytes that are not what the label says, by signature and by
 * structure (UnsupportedMediaTypeError: core/attachment-content.ts),
 * more than MAX_ATTACHMENT_BYTES (AttachmentTooLargeError), nothing or a bad name (ValidationError).
 */
export async function storeAttachment(blobs: BlobStore, tenant: string, upload: AttachmentUpload): Promise<AttachmentRef> {
  const { bytes, mediaType } = upload;
  if (!isAttachmentMediaType(mediaType)) {
    const what = mediaType === '' ? 'the upload has no Content-Type' : `${mediaType} is not an attachment type`;
    throw new UnsupportedMediaTypeError(`${what}; send one of ${ATTACHMENT_MEDIA_TYPES.join(', ')}`);
  }
  if (bytes.byteLength === 0) throw new ValidationError('the attachment is empty', [{ path: 'body', message: 'no bytes' }]);
  if (bytes.byteLength > MAX_ATTACHMENT_BYTES) {
    throw new AttachmentTooLargeError(`the attachment is ${bytes.byteLength} bytes; the limit is ${MAX_ATTACHMENT_BYTES}`);
  }
  const mislabeled = signatureProblem(mediaType, bytes);
  if (mislabeled) throw new UnsupportedMediaTypeError(`${mislabeled}: send it with its own Content-Type`);
  const malformed = labelProblem(mediaType, bytes, { inflate: inflateCapped });
  if (malformed) throw new UnsupportedMediaTypeError(malformed);
  const sha256 = sha256Hex(bytes);
  const ref = attachmentRefSchema.safeParse({
    kind: 'blob',
    sha256,
    mediaType,
    bytes: bytes.byteLength,
    ...(upload.name !== undefined ? { name: upload.name } : {}),
  });
  if (!ref.success) throw new ValidationError('invalid attachment name', zodIssues(ref.error, { prefix: 'query' }));
  await blobs.put(attachmentKey(tenant, sha256), bytes, { contentType: mediaType });
  return ref.data;
}

/** The bytes of an upload of this tenant (sha256-checked by the store); BlobNotFoundError when none. */
export function readAttachment(blobs: BlobStore, tenant: string, sha256: string): Promise<Uint8Array> {
  return blobs.get(attachmentKey(tenant, sha256), { sha256 });
}

/**
 * Every attachment reference in `value` must be well formed, uploaded by this tenant with exactly
 * that size and a type its bytes fit, within the per-message counts, and of a kind the pinned
 * model takes. Otherwise a ValidationError naming each bad reference by path (`input.photo`), so
 * a start or message that refers to what it may not is refused before anything is written.
 */
export async function checkAttachments(blobs: BlobStore, tenant: string, modelId: string, value: JsonValue, path: string): Promise<void> {
  const candidates = attachmentCandidates(value, path);
  if (candidates.length === 0) return;
  const issues: IssueText[] = [];
  const counts = { image: 0, document: 0 };
  const checks: Promise<void>[] = [];
  for (const c of candidates) {
    const parsed = attachmentRefSchema.safeParse(c.value);
    if (!parsed.success) {
      issues.push(...zodIssues(parsed.error, { prefix: c.path }));
      continue;
    }
    const ref = parsed.data;
    const kind = attachmentKind(ref.mediaType);
    if (++counts[kind] === MAX_ATTACHMENTS_PER_MESSAGE[kind] + 1) {
      issues.push({ path: c.path, message: `more than ${MAX_ATTACHMENTS_PER_MESSAGE[kind]} ${kind} attachments in one message` });
    }
    const unsupported = attachmentProblem(modelId, ref.mediaType);
    if (unsupported) issues.push({ path: c.path, message: unsupported });
    checks.push(
      uploadProblem(blobs, tenant, ref).then((problem) => {
        if (problem) issues.push({ path: c.path, message: problem });
      }),
    );
  }
  await Promise.all(checks);
  if (issues.length > 0) {
    issues.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    throw new ValidationError('the attachments cannot be used', issues);
  }
}

async function uploadProblem(blobs: BlobStore, tenant: string, ref: AttachmentRef): Promise<string | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readAttachment(blobs, tenant, ref.sha256);
  } catch (error) {
    // Another tenant's upload is as absent as one never made: the key is under the caller's tenant.
    if (error instanceof BlobNotFoundError) return `no attachment ${ref.sha256} was uploaded for this tenant (POST /attachments first)`;
    throw error;
  }
  if (bytes.byteLength !== ref.bytes) return `the upload ${ref.sha256.slice(0, 12)} is ${bytes.byteLength} bytes, not ${ref.bytes}`;
  return labelProblem(ref.mediaType, bytes, { inflate: inflateCapped });
}

/**
 * The attachments of a user message body for the model: its references (each sha256 once) with
 * their bytes from the tenant's uploads, hash-checked. Undefined when it carries none, which is
 * every string input and every message written before attachments existed.
 */
export async function messageAttachments(blobs: BlobStore, tenant: string, value: JsonValue): Promise<ModelAttachment[] | undefined> {
  const refs = attachmentRefs(value);
  if (refs.length === 0) return undefined;
  return Promise.all(
    refs.map(async (ref) => {
      const bytes = await readAttachment(blobs, tenant, ref.sha256);
      return Object.freeze({
        kind: attachmentKind(ref.mediaType),
        mediaType: ref.mediaType,
        sha256: ref.sha256,
        ...(ref.name !== undefined ? { name: ref.name } : {}),
        data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
      });
    }),
  );
}

/** Whether an inline user body may carry attachments (only a non-string value can). */
export function mayCarryAttachments(body: Body): boolean {
  return body.kind === 'blob' || (typeof body.value === 'object' && body.value !== null && attachmentRefs(body.value).length > 0);
}
