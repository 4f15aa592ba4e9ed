/**
 * The two OTLP encodings at the level both signals share: a protobuf wire-format decoder (field
 * number to values) and the attribute shapes of OTLP JSON. The trace and metric decoders read
 * their messages with these.
 */

// ---- OTLP JSON --------------------------------------------------------------------------------

export type JsonAny = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values?: JsonAny[] } };
export type JsonKv = { key: string; value: JsonAny };

export function jsonValue(v: JsonAny): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}
export const jsonAttrs = (kvs: JsonKv[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
/** OTLP JSON ids are hex; a base64 one (protobuf JSON mapping) is read too. */
export const jsonId = (id: string | undefined, bytes: number) => (!id ? '' : new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(id) ? id : Buffer.from(id, 'base64').toString('hex'));

// ---- OTLP protobuf ----------------------------------------------------------------------------

/** One protobuf message as field number → values (varints as bigint, length-delimited as bytes). */
export type Fields = Map<number, (bigint | Buffer)[]>;

export function decode(buf: Buffer): Fields {
  const fields: Fields = new Map();
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const byte = buf[i++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.readBigUInt64LE(i);
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      value = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 5) {
      value = BigInt(buf.readUInt32LE(i));
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field) ?? [];
    list.push(value);
    fields.set(field, list);
  }
  return fields;
}

export const bytesOf = (f: Fields, n: number): Buffer[] => (f.get(n) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
export const firstBytes = (f: Fields, n: number): Buffer | undefined => bytesOf(f, n)[0];
export const str = (f: Fields, n: number): string => firstBytes(f, n)?.toString('utf8') ?? '';
export const num = (f: Fields, n: number): bigint => {
  const v = f.get(n)?.[0];
  return typeof v === 'bigint' ? v : 0n;
};

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue (1: values). */
export function anyValue(buf: Buffer): unknown {
  const f = decode(buf);
  if (f.has(1)) return str(f, 1);
  if (f.has(2)) return num(f, 2) !== 0n;
  if (f.has(3)) return Number(BigInt.asIntN(64, num(f, 3)));
  if (f.has(4)) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(num(f, 4));
    return b.readDoubleLE(0);
  }
  if (f.has(5)) return bytesOf(decode(firstBytes(f, 5) as Buffer), 1).map(anyValue);
  return undefined;
}

/** repeated KeyValue (1: key, 2: AnyValue). */
export const pbAttrs = (kvs: Buffer[]) =>
  Object.fromEntries(
    kvs.map((kv) => {
      const f = decode(kv);
      const value = firstBytes(f, 2);
      return [str(f, 1), value ? anyValue(value) : undefined];
    }),
  );

/** A fixed64 read as the IEEE double it holds (protobuf `double` fields). */
export function doubleOf(bits: bigint): number {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(bits);
  return b.readDoubleLE(0);
}

/** A repeated fixed64 / double field, packed (one length-delimited run) or not. */
export function fixed64s(f: Fields, n: number): bigint[] {
  const out: bigint[] = [];
  for (const v of f.get(n) ?? []) {
    if (typeof v === 'bigint') out.push(v);
    else for (let i = 0; i + 8 <= v.length; i += 8) out.push(v.readBigUInt64LE(i));
  }
  return out;
}
