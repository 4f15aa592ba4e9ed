/**
 * Small files that are what they say, built in the test: each frames correctly end to end (PNG
 * chunks with CRCs, JPEG segments to EOI, GIF blocks to the trailer, a WebP RIFF that fills the
 * file, a PDF with its trailer, a docx that is a real zip package), so the upload's structural
 * checks (lib/core/attachment-content.ts) pass them; `size` pads a file to exactly that many
 * bytes with a comment its format allows, and `seed` makes files of one size differ.
 */
import { deflateRawSync, deflateSync } from 'node:zlib';
import { crc32 } from '../../../lib/core/crc32.js';

const enc = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const be32 = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
const le16 = (n: number) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff);
const le32 = (n: number) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
const filler = (n: number, seed: number) => Uint8Array.from({ length: Math.max(0, n) }, (_, i) => 0x41 + ((i * 7 + seed) % 26));

function exactly(size: number | undefined, base: number, overhead: number, what: string): number {
  if (size === undefined) return 0;
  const pad = size - base - overhead;
  if (pad < 0) throw new Error(`a ${what} fixture is at least ${base + overhead} bytes, not ${size}`);
  return pad;
}

/** One PNG chunk: length, type, data, CRC over type and data. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const body = concat(enc(type), data);
  return concat(be32(data.length), body, be32(crc32(body)));
}

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

/** A w x h RGB PNG (one colour from `seed`), padded to `size` bytes with a tEXt comment. */
export function pngBytes(size?: number, seed = 1, dims: { width: number; height: number } = { width: 1, height: 1 }): Uint8Array {
  const ihdr = pngChunk('IHDR', concat(be32(dims.width), be32(dims.height), Uint8Array.of(8, 2, 0, 0, 0)));
  const rows = Math.min(dims.height, 4);
  const scanlines = new Uint8Array(rows * (1 + 3 * Math.min(dims.width, 4))).fill(seed & 0xff);
  const idat = pngChunk('IDAT', deflateSync(scanlines));
  const iend = pngChunk('IEND', new Uint8Array(0));
  const base = PNG_SIGNATURE.length + ihdr.length + idat.length + iend.length;
  const pad = exactly(size, base, 12 + 8, 'PNG');
  const text = size === undefined ? new Uint8Array(0) : pngChunk('tEXt', concat(enc('Comment\0'), filler(pad, seed)));
  return concat(PNG_SIGNATURE, ihdr, text, idat, iend);
}

const segment = (marker: number, data: Uint8Array) => concat(Uint8Array.of(0xff, marker), be16(data.length + 2), data);
const be16 = (n: number) => Uint8Array.of(n >>> 8, n & 0xff);

/** A baseline JPEG's framing: SOI, APP0, SOF0 (w x h, one component), SOS, scan data, EOI; padded with a COM segment. */
export function jpegBytes(size?: number, dims: { width: number; height: number } = { width: 1, height: 1 }): Uint8Array {
  const app0 = segment(0xe0, concat(enc('JFIF\0'), Uint8Array.of(1, 1, 0, 0, 1, 0, 1, 0, 0)));
  const sof = segment(0xc0, concat(Uint8Array.of(8), be16(dims.height), be16(dims.width), Uint8Array.of(1, 1, 0x11, 0)));
  const sos = segment(0xda, Uint8Array.of(1, 1, 0, 0, 0x3f, 0));
  const scan = Uint8Array.of(0x12, 0x34, 0xff, 0x00, 0x56);
  const eoi = Uint8Array.of(0xff, 0xd9);
  const base = 2 + app0.length + sof.length + sos.length + scan.length + eoi.length;
  const pad = exactly(size, base, 4, 'JPEG');
  const com = size === undefined ? new Uint8Array(0) : segment(0xfe, filler(pad, 3));
  return concat(Uint8Array.of(0xff, 0xd8), app0, com, sof, sos, scan, eoi);
}

/** A 1 x 1 (or w x h) GIF89a: screen, 2-colour table, one image, trailer. */
export function gifBytes(dims: { width: number; height: number } = { width: 1, height: 1 }): Uint8Array {
  return concat(
    enc('GIF89a'),
    le16(dims.width),
    le16(dims.height),
    Uint8Array.of(0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff),
    Uint8Array.of(0x2c, 0, 0, 0, 0),
    le16(dims.width),
    le16(dims.height),
    Uint8Array.of(0, 2, 2, 0x4c, 0x01, 0, 0x3b),
  );
}

/** A lossless (VP8L) WebP header of w x h in a RIFF that fills the file exactly. */
export function webpBytes(dims: { width: number; height: number } = { width: 1, height: 1 }): Uint8Array {
  const bits = ((dims.width - 1) & 0x3fff) | (((dims.height - 1) & 0x3fff) << 14);
  const vp8l = concat(Uint8Array.of(0x2f), le32(bits), Uint8Array.of(0, 0, 0));
  const chunk = concat(enc('VP8L'), le32(vp8l.length), vp8l);
  return concat(enc('RIFF'), le32(4 + chunk.length), enc('WEBP'), chunk);
}

/** A one-page PDF with its cross-reference table and trailer. */
export function pdfBytes(text = 'Visa letter'): Uint8Array {
  const head = `%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n% ${text}\n`;
  const xref = head.length;
  return enc(`${head}xref\n0 3\n0000000000 65535 f \ntrailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
}

export const textBytes = (text = 'order,amount\n1001,45.00\n'): Uint8Array => enc(text);

export interface ZipEntrySpec {
  name: string;
  data: Uint8Array;
  /** 8 (deflate, the default) or 0 (stored). */
  method?: 0 | 8;
  /** Already deflated bytes to store as the entry's data (a bomb), with `declaredSize` as its size. */
  raw?: Uint8Array;
  declaredSize?: number;
}

/** A zip built entry by entry: local headers and data, then the central directory and its end record. */
export function zipBytes(entries: ZipEntrySpec[]): Uint8Array {
  const locals: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const method = e.method ?? 8;
    const data = e.raw ?? (method === 8 ? new Uint8Array(deflateRawSync(e.data)) : e.data);
    const size = e.declaredSize ?? e.data.length;
    const crc = crc32(e.data);
    const name = enc(e.name);
    const common = concat(le16(20), le16(0), le16(method), le16(0), le16(0), le32(crc), le32(data.length), le32(size), le16(name.length), le16(0));
    const local = concat(le32(0x04034b50), common, name, data);
    central.push(concat(le32(0x02014b50), le16(20), common, le16(0), le16(0), le16(0), le32(0), le32(offset), name));
    locals.push(local);
    offset += local.length;
  }
  const directory = concat(...central);
  const end = concat(le32(0x06054b50), le16(0), le16(0), le16(entries.length), le16(entries.length), le32(directory.length), le32(offset), le16(0));
  return concat(...locals, directory, end);
}

export const DOCX_CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';

/** The parts every Word document has; `extra` adds entries (or replaces one of the same name). */
export function docxEntries(text = 'Hello from a docx', extra: ZipEntrySpec[] = []): ZipEntrySpec[] {
  const base: ZipEntrySpec[] = [
    { name: '[Content_Types].xml', data: enc(DOCX_CONTENT_TYPES) },
    {
      name: '_rels/.rels',
      data: enc(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/document.xml',
      data: enc(
        `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
      ),
    },
  ];
  const names = new Set(extra.map((e) => e.name));
  return [...base.filter((e) => !names.has(e.name)), ...extra];
}

/** A small but real docx. */
export function docxBytes(text?: string): Uint8Array {
  return zipBytes(docxEntries(text));
}
