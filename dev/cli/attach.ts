import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { AttachmentRef } from '../../lib/core/attachments.js';
import type { LogbookClient } from './api-client.js';
import { UsageError } from './output.js';

/**
 * `--attach [FIELD=]PATH` (repeatable) for `runs start` and `runs message`: each file is uploaded
 * (POST /attachments, its type from its extension, the server checks the bytes) and its reference
 * goes into the input, at `FIELD` when given, else appended to the input's `attachments` array.
 * A text input becomes `{ text, ... }` so it can carry them.
 */

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export const ATTACH_USAGE = '--attach [FIELD=]PATH (repeatable: uploads the file; its reference goes in FIELD, or in the input\'s "attachments")';

interface AttachSpec {
  field?: string;
  path: string;
}

function parseSpec(spec: string): AttachSpec {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(spec);
  return match ? { field: match[1]!, path: match[2]! } : { path: spec };
}

export function mediaTypeOfPath(path: string): string {
  const type = TYPES[extname(path).toLowerCase()];
  if (!type) throw new UsageError(`--attach ${path}: unknown file type; the types it attaches: ${Object.keys(TYPES).join(', ')}`);
  return type;
}

/** Upload each `--attach` file; the input with their references in it (the input itself when none). */
export async function withAttachments(
  client: LogbookClient,
  input: unknown,
  specs: readonly string[] | undefined,
): Promise<{ input: unknown; refs: AttachmentRef[] }> {
  if (!specs || specs.length === 0) return { input, refs: [] };
  const parsed = specs.map(parseSpec);
  let base: Record<string, unknown>;
  if (typeof input === 'string') base = { text: input };
  else if (typeof input === 'object' && input !== null && !Array.isArray(input)) base = { ...(input as Record<string, unknown>) };
  else throw new UsageError('--attach needs a text or JSON object input (the references go into it)');
  for (const { field } of parsed) {
    if (field !== undefined && Object.hasOwn(base, field)) throw new UsageError(`--attach ${field}=...: the input already has a "${field}" field`);
  }
  if (parsed.some((p) => p.field === undefined) && Object.hasOwn(base, 'attachments')) {
    throw new UsageError('--attach PATH: the input already has an "attachments" field (use --attach FIELD=PATH)');
  }
  const refs: AttachmentRef[] = [];
  for (const { field, path } of parsed) {
    const mediaType = mediaTypeOfPath(path);
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new UsageError(`--attach ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
    const { ref } = await client.upload(bytes, mediaType, basename(path));
    refs.push(ref);
    if (field !== undefined) base[field] = ref;
    else base.attachments = [...((base.attachments as unknown[] | undefined) ?? []), ref];
  }
  return { input: base, refs };
}
