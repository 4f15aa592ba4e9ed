import { z } from 'zod';
import type { Body } from './body.js';
import type { JsonValue } from './json.js';
import { NAME_FORBIDDEN, contentProblem, type ContentCheckOptions } from './attachment-content.js';

/**
 * Attachments: images and documents a run's input (or a follow-up message) carries by reference.
 * The bytes are uploaded once (POST /attachments), stored under the tenant by their sha256, and
 * the log holds only the reference `{ kind: 'blob', sha256, mediaType, bytes, name? }`: the prompt
 * builder fetches the bytes when it builds a model request, never the log.
 *
 * The allow-list is what Bedrock Converse takes as image and document blocks (png, jpeg, gif,
 * webp; pdf, txt, csv, md, html, docx) less the legacy and spreadsheet formats (doc, xls, xlsx)
 * that neither the OpenAI chat API nor a magic-byte check can tell apart reliably. Every type here
 * is recognisable from its bytes, so a mislabeled file is refused at upload.
 */
export const ATTACHMENT_TYPES = {
  'image/png': { kind: 'image', format: 'png' },
  'image/jpeg': { kind: 'image', format: 'jpeg' },
  'image/gif': { kind: 'image', format: 'gif' },
  'image/webp': { kind: 'image', format: 'webp' },
  'application/pdf': { kind: 'document', format: 'pdf' },
  'text/plain': { kind: 'document', format: 'txt' },
  'text/csv': { kind: 'document', format: 'csv' },
  'text/markdown': { kind: 'document', format: 'md' },
  'text/html': { kind: 'document', format: 'html' },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { kind: 'document', format: 'docx' },
} as const satisfies Record<string, { kind: 'image' | 'document'; format: string }>;

export type AttachmentMediaType = keyof typeof ATTACHMENT_TYPES;
export type AttachmentKind = 'image' | 'document';
export const ATTACHMENT_MEDIA_TYPES = Object.keys(ATTACHMENT_TYPES) as [AttachmentMediaType, ...AttachmentMediaType[]];

export function isAttachmentMediaType(type: string): type is AttachmentMediaType {
  return Object.hasOwn(ATTACHMENT_TYPES, type);
}

export function attachmentKind(type: AttachmentMediaType): AttachmentKind {
  return ATTACHMENT_TYPES[type].kind;
}

/**
 * A file name as a person gave it: shown in the inspector and to the model, never a path on disk.
 * 1 to 255 characters; no slash, backslash, control character (C0 or C1, U+0085 among them), line
 * separator or bidirectional control (attachment-content.ts: NAME_FORBIDDEN).
 */
const nameSchema = z
  .string()
  .min(1, '1 to 255 characters')
  .max(255, '1 to 255 characters')
  .refine((name) => !NAME_FORBIDDEN.test(name), 'no slashes, control characters, line separators or bidirectional controls (U+202E and the like)');

/** The reference a run's input holds in place of the bytes (what POST /attachments answers). */
export const attachmentRefSchema = z
  .object({
    kind: z.literal('blob'),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256'),
    mediaType: z.enum(ATTACHMENT_MEDIA_TYPES),
    bytes: z.number().int().positive(),
    name: nameSchema.optional(),
  })
  .strict();
export type AttachmentRef = z.infer<typeof attachmentRefSchema>;

/** Something in a value that claims to be an attachment: an object with kind "blob" and a mediaType. */
export interface AttachmentCandidate {
  /** `input.photo`, `input.files.1`: where it sits, as the API names fields. */
  path: string;
  value: JsonValue;
}

function isCandidate(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'blob' && Object.hasOwn(value, 'mediaType');
}

/**
 * Every attachment-shaped object in `value`, in document order (depth first, keys in their
 * order). Not descended into: a reference holds no other. A string input holds none.
 */
export function attachmentCandidates(value: JsonValue, path: string): AttachmentCandidate[] {
  const out: AttachmentCandidate[] = [];
  const walk = (v: JsonValue, at: string) => {
    if (typeof v !== 'object' || v === null) return;
    if (isCandidate(v)) {
      out.push({ path: at, value: v });
      return;
    }
    if (Array.isArray(v)) v.forEach((item: JsonValue, i) => walk(item, `${at}.${i}`));
    else for (const [key, item] of Object.entries(v as { [key: string]: JsonValue })) walk(item, `${at}.${key}`);
  };
  walk(value, path);
  return out;
}

/**
 * The references a message carries, each sha256 once (the same bytes twice tell a model nothing
 * more). Candidates that are not valid references are skipped: every edge that writes a message
 * refused them already (engine/attachments.ts), so only a log written before attachments existed
 * could hold one, and there it was plain data.
 */
export function attachmentRefs(value: JsonValue): AttachmentRef[] {
  const seen = new Set<string>();
  const out: AttachmentRef[] = [];
  for (const c of attachmentCandidates(value, '')) {
    const parsed = attachmentRefSchema.safeParse(c.value);
    if (!parsed.success || seen.has(parsed.data.sha256)) continue;
    seen.add(parsed.data.sha256);
    out.push(parsed.data);
  }
  return out;
}

/**
 * Input tokens the budget reserves for one image: deliberately high. Claude on Bedrock charges
 * about width × height / 750 tokens and scales images down to about 1,600 tokens; Nova and the
 * OpenAI vision models charge less or similar for their largest tiles.
 */
export const IMAGE_TOKENS_ESTIMATE = 3_000;

/**
 * Characters the input-token estimate (core/budgets.ts, about 3 characters a token) adds for the
 * attachments of a user message body: an image at IMAGE_TOKENS_ESTIMATE, a document at its size
 * (a text document is about that many characters; a PDF's pages cost more tokens than its bytes
 * suggest only when they are images, and then fewer bytes per page). A body offloaded to the blob
 * store is not read for this (its references are counted as the body's bytes only).
 */
export function attachmentChars(body: Body): number {
  if (body.kind !== 'inline' || typeof body.value !== 'object' || body.value === null) return 0;
  let chars = 0;
  for (const ref of attachmentRefs(body.value)) chars += attachmentKind(ref.mediaType) === 'image' ? IMAGE_TOKENS_ESTIMATE * 3 : ref.bytes;
  return chars;
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const PDF = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP = [0x50, 0x4b, 0x03, 0x04]; // PK\3\4
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((b, i) => bytes[at + i] === b);
}

function contains(bytes: Uint8Array, needle: readonly number[]): boolean {
  const first = needle[0];
  for (let i = bytes.indexOf(first!); i !== -1 && i + needle.length <= bytes.length; i = bytes.indexOf(first!, i + 1)) {
    if (startsWith(bytes, needle, i)) return true;
  }
  return false;
}

const WORD_DOCUMENT = ascii('word/document.xml');

/**
 * What the bytes are, by their magic numbers: one of the binary types, `text` (strict UTF-8 with
 * no NUL: txt, csv, md and html look alike and are told apart only by their label), or undefined.
 * A docx is a zip whose directory names `word/document.xml` (file names are stored uncompressed).
 * Only the first bytes: labelProblem checks the structure behind them.
 */
export function sniffAttachment(bytes: Uint8Array): AttachmentMediaType | 'text' | undefined {
  if (startsWith(bytes, PNG)) return 'image/png';
  if (startsWith(bytes, JPEG)) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(bytes, PDF)) return 'application/pdf';
  if (startsWith(bytes, ZIP)) return contains(bytes, WORD_DOCUMENT) ? 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' : undefined;
  if (bytes.includes(0)) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return 'text';
  } catch {
    return undefined;
  }
}

/** Why bytes labeled `mediaType` do not carry that type's signature (undefined: they do). */
export function signatureProblem(mediaType: AttachmentMediaType, bytes: Uint8Array): string | undefined {
  const sniffed = sniffAttachment(bytes);
  if (sniffed === mediaType || (sniffed === 'text' && mediaType.startsWith('text/'))) return undefined;
  if (sniffed === undefined) return `the bytes are not ${mediaType}: no known file signature, and not UTF-8 text`;
  return `the bytes are ${sniffed === 'text' ? 'text' : sniffed}, not ${mediaType}`;
}

/**
 * Why bytes labeled `mediaType` are not what the label says (undefined: they are): first their
 * signature, then their structure (attachment-content.ts: an image framed to its end within
 * bounded dimensions, a PDF with its trailer, a docx a sound zip holding a Word document).
 */
export function labelProblem(mediaType: AttachmentMediaType, bytes: Uint8Array, options: ContentCheckOptions = {}): string | undefined {
  const wrong = signatureProblem(mediaType, bytes);
  if (wrong) return wrong;
  const problem = contentProblem(mediaType, bytes, options);
  return problem === undefined ? undefined : `the bytes are not a ${ATTACHMENT_TYPES[mediaType].format} this API takes: ${problem}`;
}

/** The media type an attachment is served as: text of any kind as text/plain, so no browser renders it as a page. */
export function servedMediaType(bytes: Uint8Array): string {
  const sniffed = sniffAttachment(bytes);
  if (sniffed === undefined) return 'application/octet-stream';
  return sniffed === 'text' ? 'text/plain; charset=utf-8' : sniffed;
}
