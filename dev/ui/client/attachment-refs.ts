/** Attachment references in a logged value, as the inspector lists them. No DOM here: unit tests import it. */

export interface AttachmentRefView {
  sha256: string;
  mediaType: string;
  bytes: number;
  name?: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

function asRef(v: Record<string, unknown>): AttachmentRefView | undefined {
  if (v.kind !== 'blob' || typeof v.sha256 !== 'string' || !SHA256.test(v.sha256) || typeof v.mediaType !== 'string' || typeof v.bytes !== 'number')
    return undefined;
  return { sha256: v.sha256, mediaType: v.mediaType, bytes: v.bytes, ...(typeof v.name === 'string' ? { name: v.name } : {}) };
}

/**
 * Every `{ kind: 'blob', sha256, mediaType, bytes, name? }` in a run input or message, each sha256
 * once, in document order (the order the model received them).
 */
export function attachmentRefsIn(value: unknown): AttachmentRefView[] {
  const out: AttachmentRefView[] = [];
  const seen = new Set<string>();
  const walk = (v: unknown, depth: number) => {
    if (typeof v !== 'object' || v === null || depth > 64) return;
    if (Array.isArray(v)) {
      for (const item of v) walk(item, depth + 1);
      return;
    }
    const ref = asRef(v as Record<string, unknown>);
    if (ref) {
      if (!seen.has(ref.sha256)) out.push(ref);
      seen.add(ref.sha256);
      return;
    }
    for (const item of Object.values(v)) walk(item, depth + 1);
  };
  walk(value, 0);
  return out;
}

/** The file name a download gets: the uploaded name without path characters, or the sha256's start. */
export function downloadName(ref: AttachmentRefView): string {
  const name = (ref.name ?? '').replace(/[\\/\x00-\x1f\x7f]/g, '_').trim();
  return name === '' ? `attachment-${ref.sha256.slice(0, 12)}` : name;
}
