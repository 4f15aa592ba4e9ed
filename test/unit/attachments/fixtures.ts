/** Small files whose first bytes are what their type's signature says (the sniffer reads no further). */
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function pngBytes(size = 64, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set(PNG_SIGNATURE);
  for (let i = PNG_SIGNATURE.length; i < size; i++) bytes[i] = (i * 31 + seed * 7) & 0xff;
  return bytes;
}

export function jpegBytes(size = 64): Uint8Array {
  const bytes = new Uint8Array(size).fill(0x42);
  bytes.set([0xff, 0xd8, 0xff, 0xe0]);
  return bytes;
}

export const pdfBytes = (): Uint8Array => new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n');
export const textBytes = (text = 'order,amount\n1001,45.00\n'): Uint8Array => new TextEncoder().encode(text);

/** A zip whose only entry is word/document.xml, as a docx's directory names it. */
export function docxBytes(): Uint8Array {
  const name = new TextEncoder().encode('word/document.xml');
  const bytes = new Uint8Array(30 + name.length + 8);
  bytes.set([0x50, 0x4b, 0x03, 0x04]);
  bytes.set(name, 30);
  return bytes;
}
