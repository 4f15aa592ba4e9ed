/**
 * A docx is a zip: read here from its central directory, the way an unzipper finds its entries,
 * and held to what an honest Office document is. Refused: no end-of-central-directory record (a
 * fake that only starts like a zip), a directory that does not match the local headers, entries
 * that overlap (the overlapping-file zip bomb), names that climb out (`../`), are absolute, use
 * backslashes or control characters or repeat, encryption, methods other than stored and deflate,
 * ZIP64, more than MAX_ZIP_ENTRIES entries, an entry that expands more than MAX_ZIP_RATIO times,
 * more than MAX_ZIP_UNCOMPRESSED_BYTES in all, and a package without the parts every Word
 * document has. With an `inflate` (the engine passes zlib's), every deflated entry is inflated
 * with its declared size as the cap, so a size that lies is caught without ever inflating more
 * than the bound; the content types part must name a Word main document.
 */

/** Entries a docx may hold: Word writes a few dozen; thousands are a way to make readers slow. */
export const MAX_ZIP_ENTRIES = 1_000;
/** Bytes all entries may expand to together (a 3.75 MB docx of text is a few tens of MB of XML). */
export const MAX_ZIP_UNCOMPRESSED_BYTES = 64 * 1024 * 1024;
/** How many times larger than its compressed bytes an entry of more than a MiB may expand (deflate tops out near 1,032). */
export const MAX_ZIP_RATIO = 200;

/** Inflates raw deflate data to at most `maxBytes` bytes; undefined when it is corrupt or would expand further. */
export type Inflate = (deflated: Uint8Array, maxBytes: number) => Uint8Array | undefined;

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Where the entry's data starts (after its local header). */
  dataAt: number;
}

export type ZipRead = { ok: true; entries: ZipEntry[] } | { ok: false; problem: string };

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const fail = (problem: string): { ok: false; problem: string } => ({ ok: false, problem });
/** Bytes as Latin-1 text, a slice at a time (a spread of a whole file would overflow the stack). */
const latin = (b: Uint8Array) => {
  let s = '';
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode(...b.subarray(i, i + 8192));
  return s;
};

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** The end-of-central-directory record: in the last 22 + 65,535 bytes (its comment may follow it). */
function findEocd(b: Uint8Array): number {
  for (let at = b.length - 22; at >= Math.max(0, b.length - 22 - 0xffff); at--) {
    if (u32(b, at) === EOCD && at + 22 + u16(b, at + 20) === b.length) return at;
  }
  return -1;
}

/** Why an entry name may not be used: it must be a relative path of printable ASCII, no `.`/`..` segments. */
export function entryNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'an entry has an empty name';
  if (!/^[\x21-\x7e]+$/.test(name.replace(/ /g, '_'))) return `the entry name ${JSON.stringify(name)} holds characters other than printable ASCII`;
  if (name.includes('\\')) return `the entry name ${JSON.stringify(name)} has a backslash`;
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return `the entry name ${JSON.stringify(name)} is an absolute path`;
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.some((s) => s === '..' || s === '.' || s === ''))
    return `the entry name ${JSON.stringify(name)} climbs out of the package or has an empty segment`;
  return undefined;
}

/** The entries of a zip, read from its central directory and checked against their local headers. */
export function readZip(b: Uint8Array): ZipRead {
  const eocd = findEocd(b);
  if (eocd < 0) return fail('it has no zip central directory (only its first bytes look like a zip)');
  if (u16(b, eocd + 4) !== 0 || u16(b, eocd + 6) !== 0) return fail('it is a multi-part zip');
  const count = u16(b, eocd + 10);
  const size = u32(b, eocd + 12);
  const offset = u32(b, eocd + 16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) return fail('it is a ZIP64 archive (no docx needs one)');
  if (u16(b, eocd + 8) !== count) return fail('its central directory disagrees with itself about the entry count');
  if (count === 0) return fail('the zip holds no entry');
  if (count > MAX_ZIP_ENTRIES) return fail(`the zip holds ${count} entries; at most ${MAX_ZIP_ENTRIES} are accepted`);
  if (offset + size !== eocd) return fail('its central directory is not where its end record says');
  const entries: ZipEntry[] = [];
  const names = new Set<string>();
  const spans: [number, number][] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || u32(b, at) !== CENTRAL) return fail(`central directory entry ${i + 1} is malformed`);
    const flags = u16(b, at + 8);
    const method = u16(b, at + 10);
    const compressedSize = u32(b, at + 20);
    const uncompressedSize = u32(b, at + 24);
    const nameLength = u16(b, at + 28);
    const next = at + 46 + nameLength + u16(b, at + 30) + u16(b, at + 32);
    if (next > eocd) return fail(`central directory entry ${i + 1} runs past the directory`);
    const name = latin(b.subarray(at + 46, at + 46 + nameLength));
    const bad = entryNameProblem(name);
    if (bad) return fail(bad);
    if (names.has(name)) return fail(`the entry ${JSON.stringify(name)} appears twice`);
    names.add(name);
    if (flags & 0x0001) return fail(`the entry ${name} is encrypted`);
    if (method !== 0 && method !== 8) return fail(`the entry ${name} uses compression method ${method} (only stored and deflate are accepted)`);
    if (method === 0 && compressedSize !== uncompressedSize) return fail(`the stored entry ${name} has two different sizes`);
    if (compressedSize === 0xffffffff || uncompressedSize === 0xffffffff) return fail(`the entry ${name} needs ZIP64`);
    // The local header must be there, for the same name, and its data inside the file before the directory.
    const local = u32(b, at + 42);
    if (local + 30 > offset || u32(b, local) !== LOCAL) return fail(`the entry ${name} has no local header where the directory says`);
    const localName = u16(b, local + 26);
    const dataAt = local + 30 + localName + u16(b, local + 28);
    if (localName !== nameLength || latin(b.subarray(local + 30, local + 30 + localName)) !== name) {
      return fail(`the entry ${name} has another name in its local header`);
    }
    if (dataAt + compressedSize > offset) return fail(`the entry ${name} runs into the central directory`);
    spans.push([local, dataAt + compressedSize]);
    entries.push({ name, method, compressedSize, uncompressedSize, dataAt });
    at = next;
  }
  if (at !== eocd) return fail('the central directory holds more than its entries');
  spans.sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < spans.length; i++) if (spans[i]![0] < spans[i - 1]![1]) return fail('two entries overlap (a zip bomb does that)');
  return { ok: true, entries };
}

/** The parts every Word document has (ECMA-376 Part 2: the content types and package relationships; Word's main part). */
const DOCX_PARTS = ['[Content_Types].xml', '_rels/.rels', 'word/document.xml'];
const DOCX_MAIN = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml';

/** Why `b` is not a docx this API takes (see the module comment), or undefined. */
export function docxProblem(b: Uint8Array, inflate?: Inflate): string | undefined {
  const zip = readZip(b);
  if (!zip.ok) return zip.problem;
  let total = 0;
  for (const e of zip.entries) {
    total += e.uncompressedSize;
    if (total > MAX_ZIP_UNCOMPRESSED_BYTES) return `it expands to more than ${MAX_ZIP_UNCOMPRESSED_BYTES} bytes (a zip bomb does that)`;
    if (e.uncompressedSize > 1024 * 1024 && e.uncompressedSize > e.compressedSize * MAX_ZIP_RATIO) {
      return `the entry ${e.name} expands ${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))} times (at most ${MAX_ZIP_RATIO})`;
    }
  }
  const byName = new Map(zip.entries.map((e) => [e.name, e]));
  const missing = DOCX_PARTS.filter((p) => !byName.has(p));
  if (missing.length > 0) return `it is a zip without the parts of a Word document (${missing.join(', ')})`;
  if (!inflate) return undefined;
  for (const e of zip.entries) {
    const data = entryData(b, e, inflate);
    if (data === undefined) return `the entry ${e.name} does not expand to the ${e.uncompressedSize} bytes its directory says`;
    if (e.name === '[Content_Types].xml' && !latin(data).includes(DOCX_MAIN)) return 'its content types name no Word main document (it is not a docx)';
  }
  return undefined;
}

function entryData(b: Uint8Array, e: ZipEntry, inflate: Inflate): Uint8Array | undefined {
  const raw = b.subarray(e.dataAt, e.dataAt + e.compressedSize);
  if (e.method === 0) return raw;
  const out = inflate(raw, Math.max(1, e.uncompressedSize));
  return out !== undefined && out.length === e.uncompressedSize ? out : undefined;
}
