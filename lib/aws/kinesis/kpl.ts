/**
 * Records aggregated by the Kinesis Producer Library (KPL), taken apart into their user records,
 * as the KCL does. An aggregated record is
 *
 *     F3 89 9A C2 │ AggregatedRecord (protobuf) │ MD5 of the protobuf (16 bytes)
 *
 *     message AggregatedRecord { repeated string partition_key_table = 1;
 *                                repeated string explicit_hash_key_table = 2;
 *                                repeated Record records = 3; }
 *     message Record { required uint64 partition_key_index = 1; optional uint64 explicit_hash_key_index = 2;
 *                      required bytes data = 3; repeated Tag tags = 4; }
 *
 * Data without the magic prefix, or whose digest does not match, is an ordinary record (the
 * KCL's rule too). All user records of one aggregated record share its sequence number and are
 * told apart by their index, the sub-sequence number.
 *
 * Written here rather than taken from `aws-kinesis-agg` (awslabs), which the tests use to build
 * aggregated records: that package brings protobufjs and the v2 SDK's types into the Lambda
 * bundle for what is about eighty lines of varint reading.
 */
import { createHash } from 'node:crypto';

const MAGIC = [0xf3, 0x89, 0x9a, 0xc2];
const DIGEST_BYTES = 16;

export interface UserRecord {
  readonly partitionKey: string;
  readonly explicitHashKey?: string;
  /** Position in the aggregated record: the KCL's sub-sequence number. */
  readonly subSequenceNumber: number;
  readonly data: Uint8Array;
}

/** Why an aggregated record (magic and digest right) could not be read. */
export class MalformedAggregateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedAggregateError';
  }
}

/** Whether `data` carries the KPL's magic prefix and a matching digest. */
export function isAggregated(data: Uint8Array): boolean {
  if (data.length < MAGIC.length + DIGEST_BYTES) return false;
  for (let i = 0; i < MAGIC.length; i++) if (data[i] !== MAGIC[i]) return false;
  const body = data.subarray(MAGIC.length, data.length - DIGEST_BYTES);
  const digest = createHash('md5').update(body).digest();
  return digest.equals(data.subarray(data.length - DIGEST_BYTES));
}

/**
 * The user records of a KPL-aggregated record, or null when `data` is an ordinary record.
 * Throws MalformedAggregateError when the digest matches but the protobuf does not read.
 */
export function deaggregate(data: Uint8Array): UserRecord[] | null {
  if (!isAggregated(data)) return null;
  const reader = new ProtoReader(data.subarray(MAGIC.length, data.length - DIGEST_BYTES));
  const partitionKeys: string[] = [];
  const hashKeys: string[] = [];
  const raw: Array<{ pk: number; ehk?: number; data: Uint8Array }> = [];
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (field === 1 && wire === 2) partitionKeys.push(reader.string());
    else if (field === 2 && wire === 2) hashKeys.push(reader.string());
    else if (field === 3 && wire === 2) raw.push(readRecord(new ProtoReader(reader.bytes())));
    else reader.skip(wire);
  }
  return raw.map((r, i) => {
    const partitionKey = partitionKeys[r.pk];
    if (partitionKey === undefined) throw new MalformedAggregateError(`user record ${i} names partition key ${r.pk} of a table of ${partitionKeys.length}`);
    const explicitHashKey = r.ehk === undefined ? undefined : hashKeys[r.ehk];
    return { partitionKey, ...(explicitHashKey !== undefined ? { explicitHashKey } : {}), subSequenceNumber: i, data: r.data };
  });
}

function readRecord(reader: ProtoReader): { pk: number; ehk?: number; data: Uint8Array } {
  let pk: number | undefined;
  let ehk: number | undefined;
  let data: Uint8Array | undefined;
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (field === 1 && wire === 0) pk = reader.varint();
    else if (field === 2 && wire === 0) ehk = reader.varint();
    else if (field === 3 && wire === 2) data = reader.bytes();
    else reader.skip(wire);
  }
  if (pk === undefined || data === undefined) throw new MalformedAggregateError('a user record lacks its partition key index or its data');
  return { pk, ehk, data };
}

/** The protobuf wire format, as far as the KPL's two messages need it. */
class ProtoReader {
  private pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  tag(): { field: number; wire: number } {
    const key = this.varint();
    return { field: Math.floor(key / 8), wire: key % 8 };
  }

  /** An unsigned varint (table indexes and lengths: far below 2^53). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new MalformedAggregateError('a varint runs past the end of the record');
      const b = this.buf[this.pos++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new MalformedAggregateError('a varint is longer than 10 bytes');
  }

  bytes(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.buf.length) throw new MalformedAggregateError(`a field of ${n} bytes runs past the end of the record`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  string(): string {
    return Buffer.from(this.bytes()).toString('utf8');
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.advance(8);
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.advance(4);
    else throw new MalformedAggregateError(`wire type ${wire} is not one the KPL writes`);
  }

  private advance(n: number): void {
    if (this.pos + n > this.buf.length) throw new MalformedAggregateError('a fixed-size field runs past the end of the record');
    this.pos += n;
  }
}
