import { z } from 'zod';
import {
  ATTACHMENT_MEDIA_TYPES,
  attachmentKind,
  attachmentRefSchema,
  type AttachmentKind,
  type AttachmentMediaType,
  type AttachmentRef,
} from '../core/attachments.js';
import { ConfigError } from '../core/errors.js';

export type { AttachmentRef, AttachmentMediaType } from '../core/attachments.js';

export interface AttachmentOptions {
  /**
   * What the field takes: kinds (`image`, `document`) and media types (`application/pdf`). Default:
   * every attachment type. The API publishes it in the agent's input schema.
   */
  accept?: readonly (AttachmentKind | AttachmentMediaType)[];
}

/**
 * A field of an agent's `input` schema that holds an uploaded image or document: the reference
 * `POST /attachments` answers (`{ kind: 'blob', sha256, mediaType, bytes, name? }`). The run's
 * model receives the file beside the input's text; the log keeps only the reference.
 *
 * ```ts
 * input: z.object({ question: z.string(), photo: attachment({ accept: ['image'] }) })
 * ```
 */
export function attachment(options: AttachmentOptions = {}): z.ZodType<AttachmentRef> {
  if (!options.accept) return attachmentRefSchema;
  const accept = new Set<string>(options.accept);
  const types = ATTACHMENT_MEDIA_TYPES.filter((t) => accept.has(t) || accept.has(attachmentKind(t)));
  const unknown = [...accept].filter((a) => a !== 'image' && a !== 'document' && !(ATTACHMENT_MEDIA_TYPES as readonly string[]).includes(a));
  if (unknown.length > 0 || types.length === 0) {
    throw new ConfigError(
      `attachment(): accept names no attachment type (${[...accept].join(', ')}); known: image, document, ${ATTACHMENT_MEDIA_TYPES.join(', ')}`,
    );
  }
  return attachmentRefSchema.extend({ mediaType: z.enum(types as [AttachmentMediaType, ...AttachmentMediaType[]]) }) as z.ZodType<AttachmentRef>;
}
