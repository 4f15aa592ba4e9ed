import { crc32 } from './crc32.js';

/**
 * The images an upload may be, read by their structure rather than their first bytes: a PNG
 * header followed by an HTML page, a JPEG with a script after its end, a GIF that never ends are
 * refused. Each reader walks the file's own framing (PNG chunks with their CRCs, JPEG segments,
 * GIF blocks, WebP's RIFF chunks) from the signature to the end marker, takes the dimensions from
 * the header and allows nothing after the end. Pixels are not decoded: a file that frames well
 * but holds corrupt compressed data is the provider's to refuse.
 */

/**
 * The largest width or height an image may have: what Bedrock Converse takes (each image at most
 * 3.75 MB, 8,000 px wide and 8,000 px high). Anthropic's models also refuse larger ones.
 */
export const MAX_IMAGE_SIDE_PX = 8_000;

export interface ImageFacts {
  width: number;
  height: number;
}

/** Why `bytes` are not a well-framed image of this format within the bounds, or its dimensions. */
export type ImageCheck = { ok: true; facts: ImageFacts } | { ok: false; problem: string };

const fail = (problem: string): ImageCheck => ({ ok: false, problem });

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const u32le = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const fourcc = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

function sized(format: string, width: number, height: number): ImageCheck {
  if (width < 1 || height < 1) return fail(`the ${format} says it is ${width} x ${height} pixels`);
  if (width > MAX_IMAGE_SIDE_PX || height > MAX_IMAGE_SIDE_PX) {
    return fail(`the ${format} is ${width} x ${height} pixels; images are at most ${MAX_IMAGE_SIDE_PX} pixels on a side`);
  }
  return { ok: true, facts: { width, height } };
}

/** The bit depths PNG allows for each colour type. */
const PNG_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** PNG: IHDR first, at least one IDAT, every chunk's CRC right, IEND last, nothing after it. */
export function checkPng(b: Uint8Array): ImageCheck {
  let at = 8;
  let header: ImageFacts | undefined;
  let idat = false;
  for (let index = 0; ; index++) {
    if (at + 12 > b.length) return fail(at === b.length ? 'the PNG has no IEND chunk: it is cut short' : 'the PNG ends inside a chunk header');
    const length = u32be(b, at);
    const type = fourcc(b, at + 4);
    if (!/^[A-Za-z]{4}$/.test(type)) return fail(`the PNG has a chunk whose type is not four letters at byte ${at}`);
    if (length > b.length - at - 12) return fail(`the PNG's ${type} chunk runs past the end of the file`);
    const end = at + 8 + length;
    if (crc32(b, at + 4, end) !== u32be(b, end)) return fail(`the PNG's ${type} chunk fails its CRC`);
    if (index === 0) {
      if (type !== 'IHDR' || length !== 13) return fail('the PNG does not start with its IHDR chunk');
      const depth = b[at + 16]!;
      const colour = b[at + 17]!;
      if (!PNG_DEPTHS[colour]?.includes(depth)) return fail(`the PNG's IHDR has colour type ${colour} with bit depth ${depth}`);
      if (b[at + 18] !== 0 || b[at + 19] !== 0 || b[at + 20]! > 1) return fail("the PNG's IHDR names an unknown compression, filter or interlace method");
      const dims = sized('PNG', u32be(b, at + 8), u32be(b, at + 12));
      if (!dims.ok) return dims;
      header = dims.facts;
    } else if (type === 'IHDR') return fail('the PNG has a second IHDR chunk');
    if (type === 'IDAT') idat = true;
    at = end + 4;
    if (type === 'IEND') {
      if (!idat) return fail('the PNG has no image data (IDAT)');
      if (at !== b.length) return fail(`the PNG has ${b.length - at} bytes after its IEND chunk`);
      return { ok: true, facts: header! };
    }
  }
}

/** JPEG markers that carry no length: TEM, RST0-7, SOI, EOI. */
const STANDALONE = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9]);
/** Start-of-frame markers (baseline, progressive, lossless, arithmetic...), not DHT (C4), JPG (C8) or DAC (CC). */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * JPEG: SOI, segments each with its length, a frame header (SOF) with the dimensions before the
 * first scan, scans whose entropy-coded data is skipped to the next marker, EOI last. Zero bytes
 * after EOI (some cameras pad) are allowed; anything else after it is not.
 */
export function checkJpeg(b: Uint8Array): ImageCheck {
  let at = 2;
  let frame: ImageFacts | undefined;
  for (;;) {
    if (at + 2 > b.length) return fail('the JPEG has no end marker (EOI): it is cut short');
    if (b[at] !== 0xff) return fail(`the JPEG has no marker at byte ${at}`);
    let marker = b[at + 1]!;
    // Fill bytes: any number of 0xFF before a marker.
    while (marker === 0xff && at + 2 < b.length) marker = b[++at + 1]!;
    if (marker === 0xd9) {
      if (!frame) return fail('the JPEG ends before any frame header (SOF)');
      for (let i = at + 2; i < b.length; i++) if (b[i] !== 0) return fail(`the JPEG has ${b.length - at - 2} bytes after its end marker (EOI)`);
      return { ok: true, facts: frame };
    }
    if (marker === 0xd8 || marker === 0x00) return fail(`the JPEG has a misplaced marker 0x${marker.toString(16)} at byte ${at}`);
    if (STANDALONE.has(marker)) {
      at += 2;
      continue;
    }
    if (at + 4 > b.length) return fail('the JPEG ends inside a segment header');
    const length = u16be(b, at + 2);
    if (length < 2 || at + 2 + length > b.length) return fail(`the JPEG's segment 0x${marker.toString(16)} runs past the end of the file`);
    if (SOF.has(marker)) {
      if (length < 8) return fail('the JPEG has a frame header (SOF) too short to hold its dimensions');
      if (frame) return fail('the JPEG has a second frame header (SOF)');
      const dims = sized('JPEG', u16be(b, at + 7), u16be(b, at + 5));
      if (!dims.ok) return dims;
      frame = dims.facts;
    }
    at += 2 + length;
    if (marker === 0xda) {
      if (!frame) return fail('the JPEG has a scan (SOS) before its frame header (SOF)');
      // Entropy-coded data: up to the next marker that is not a stuffed 0xFF00 or a restart marker.
      while (at + 1 < b.length && !(b[at] === 0xff && b[at + 1] !== 0x00 && !(b[at + 1]! >= 0xd0 && b[at + 1]! <= 0xd7))) at++;
      if (at + 1 >= b.length) return fail('the JPEG has no end marker (EOI): it is cut short');
    }
  }
}

/** Skips GIF data sub-blocks (size byte, then that many bytes) up to the terminator; the offset after it, or -1. */
function skipSubBlocks(b: Uint8Array, at: number): number {
  while (at < b.length) {
    const size = b[at]!;
    at += 1 + size;
    if (size === 0) return at;
  }
  return -1;
}

/** GIF: header, logical screen (its dimensions), colour table, then images and extensions up to the trailer, which ends the file (or the last whole block does). */
export function checkGif(b: Uint8Array): ImageCheck {
  if (b.length < 14) return fail('the GIF is cut short before its logical screen');
  const screen = sized('GIF', u16le(b, 6), u16le(b, 8));
  if (!screen.ok) return screen;
  let at = 13 + (b[10]! & 0x80 ? 3 * 2 ** ((b[10]! & 0x07) + 1) : 0);
  let images = 0;
  for (;;) {
    // Some encoders leave the trailer out; a file that ends right after a whole block is taken,
    // as browsers take it (it can hide nothing after its end). Cut inside a block, it is refused.
    if (at === b.length && images > 0) return screen;
    if (at >= b.length) return fail('the GIF has no image and no trailer: it is cut short');
    const block = b[at]!;
    if (block === 0x3b) {
      if (images === 0) return fail('the GIF holds no image');
      if (at + 1 !== b.length) return fail(`the GIF has ${b.length - at - 1} bytes after its trailer`);
      return screen;
    }
    if (block === 0x21) {
      at = at + 2 > b.length ? -1 : skipSubBlocks(b, at + 2);
    } else if (block === 0x2c) {
      if (at + 10 > b.length) return fail('the GIF ends inside an image descriptor');
      const frame = sized('GIF frame', u16le(b, at + 5), u16le(b, at + 7));
      if (!frame.ok) return frame;
      const flags = b[at + 9]!;
      at += 10 + (flags & 0x80 ? 3 * 2 ** ((flags & 0x07) + 1) : 0);
      // The LZW minimum code size, then the image data.
      at = at + 1 > b.length ? -1 : skipSubBlocks(b, at + 1);
      images++;
    } else return fail(`the GIF has an unknown block 0x${block.toString(16)} at byte ${at}`);
    if (at < 0) return fail('the GIF ends inside a block: it is cut short');
  }
}

/**
 * WebP: a RIFF file whose size is the file's, "WEBP", then chunks that fill it exactly; the first
 * is VP8 (lossy), VP8L (lossless) or VP8X (extended, with the canvas size), each read for its
 * dimensions.
 */
export function checkWebp(b: Uint8Array): ImageCheck {
  if (b.length < 20) return fail('the WebP is cut short before its first chunk');
  const riff = u32le(b, 4);
  if (riff + 8 !== b.length) return fail(`the WebP's RIFF header says ${riff + 8} bytes, the file is ${b.length}`);
  let at = 12;
  let dims: ImageCheck | undefined;
  while (at < b.length) {
    if (at + 8 > b.length) return fail('the WebP ends inside a chunk header');
    const type = fourcc(b, at);
    const size = u32le(b, at + 4);
    const data = at + 8;
    if (size > b.length - data) return fail(`the WebP's ${type.trim()} chunk runs past the end of the file`);
    if (at === 12) dims = webpDimensions(type, b, data, size);
    at = data + size + (size % 2);
  }
  if (at !== b.length) return fail('the WebP file ends inside a chunk');
  return dims ?? fail('the WebP holds no chunk');
}

function webpDimensions(type: string, b: Uint8Array, at: number, size: number): ImageCheck {
  if (type === 'VP8 ') {
    if (size < 10 || b[at + 3] !== 0x9d || b[at + 4] !== 0x01 || b[at + 5] !== 0x2a) return fail('the WebP VP8 chunk has no frame start code');
    return sized('WebP', u16le(b, at + 6) & 0x3fff, u16le(b, at + 8) & 0x3fff);
  }
  if (type === 'VP8L') {
    if (size < 5 || b[at] !== 0x2f) return fail('the WebP VP8L chunk has no signature');
    const bits = u32le(b, at + 1);
    return sized('WebP', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (type === 'VP8X') {
    if (size < 10) return fail('the WebP VP8X chunk is too short');
    return sized('WebP', u24le(b, at + 4) + 1, u24le(b, at + 7) + 1);
  }
  return fail(`the WebP starts with a ${type.trim()} chunk, not VP8, VP8L or VP8X`);
}
