import { checkGif, checkJpeg, checkPng, checkWebp, type ImageCheck } from './image-check.js';
import { docxProblem, type Inflate } from './zip-check.js';

/**
 * What an upload's bytes must be beyond their signature, per media type (attachments.ts sniffs
 * the signature first): images framed end to end with bounded dimensions (image-check.ts), a
 * docx a real zip package with a Word document in it (zip-check.ts), a PDF with its header
 * version and its trailer (`startxref` and `%%EOF`, nothing but line ends after), text strict
 * UTF-8. What is not checked: pixels and compressed image data, a PDF's objects and cross
 * reference table, the XML inside a docx beyond its content types (docs/guides/attachments.md).
 */

export type { Inflate } from './zip-check.js';

export interface ContentCheckOptions {
  /** Raw deflate with an output cap (zlib's, passed by the engine): lets a docx's entries be checked against their declared sizes. */
  inflate?: Inflate;
}

const PDF_VERSION = /^%PDF-[12]\.\d[\r\n\t %]/;
/** How far from the end a PDF's `%%EOF` may be (readers look in the last 1,024 bytes). */
const PDF_TAIL_BYTES = 1024;

/** A PDF: `%PDF-<major>.<minor>`, and at its end `startxref`, an offset, `%%EOF`, then only line ends or spaces. */
export function pdfProblem(b: Uint8Array): string | undefined {
  const head = String.fromCharCode(...b.subarray(0, 16));
  if (!PDF_VERSION.test(head)) return 'the PDF header names no version (%PDF-1.x or %PDF-2.x)';
  const tail = String.fromCharCode(...b.subarray(Math.max(0, b.length - PDF_TAIL_BYTES)));
  const eof = tail.lastIndexOf('%%EOF');
  if (eof < 0) return 'the PDF has no %%EOF trailer at its end: it is cut short, or has more after its end';
  if (!/^[\r\n\t \0]*$/.test(tail.slice(eof + 5))) return `the PDF has ${tail.length - eof - 5} bytes after its %%EOF`;
  if (!/startxref\s+\d+\s+$/.test(tail.slice(0, eof))) return 'the PDF has no startxref before its %%EOF';
  return undefined;
}

const imageProblem = (check: ImageCheck) => (check.ok ? undefined : check.problem);

/** Why bytes whose signature already says `mediaType` are not a file of that type this API takes (undefined: they are). */
export function contentProblem(mediaType: string, bytes: Uint8Array, options: ContentCheckOptions = {}): string | undefined {
  switch (mediaType) {
    case 'image/png':
      return imageProblem(checkPng(bytes));
    case 'image/jpeg':
      return imageProblem(checkJpeg(bytes));
    case 'image/gif':
      return imageProblem(checkGif(bytes));
    case 'image/webp':
      return imageProblem(checkWebp(bytes));
    case 'application/pdf':
      return pdfProblem(bytes);
    case 'application/vnd.openxmlformats-officedocument.wordprocessingml.document':
      return docxProblem(bytes, options.inflate);
    default:
      // Text: the signature check already held it to strict UTF-8 without NUL.
      return undefined;
  }
}

/**
 * Characters a file name may not hold besides C0 controls and slashes: C1 controls (U+0085 NEL
 * among them), line and paragraph separators, the bidirectional controls that make
 * `invoice\u202Egpj.exe` read as `invoiceexe.jpg`, a BOM, and unpaired surrogates. The name is
 * shown to people and to the model: none of these has a place in it.
 */
export const NAME_FORBIDDEN =
  /[\u0000-\u001f\u007f-\u009f/\\\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
