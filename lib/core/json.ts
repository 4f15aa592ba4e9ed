/** JSON values and a canonical encoding (sorted keys) so hashes of equal content are equal. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/**
 * The first place where `value` nests more than `maxDepth` levels of arrays and objects, or holds
 * a `__proto__` key (it would vanish or turn into a prototype when copied or read back).
 * Iterative, so a hostile value cannot overflow the stack here; the recursive helpers
 * (`canonicalJson`, JSON.stringify) only ever see values that passed it.
 */
export function jsonShapeProblem(value: unknown, maxDepth: number, root = 'body'): { path: string; message: string } | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: root }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) return { path: item.path, message: `nested more than ${maxDepth} levels deep` };
    if (Array.isArray(item.value)) {
      item.value.forEach((v, i) => stack.push({ value: v, depth, path: `${item.path}.${i}` }));
      continue;
    }
    for (const key of Object.keys(item.value)) {
      if (key === '__proto__') return { path: `${item.path}.__proto__`, message: 'the key __proto__ is not allowed' };
      stack.push({ value: (item.value as Record<string, unknown>)[key], depth, path: `${item.path}.${key}` });
    }
  }
  return undefined;
}

/** UTF-8 byte length without Buffer, so the core stays free of Node APIs. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
