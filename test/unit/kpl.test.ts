/**
 * KPL-aggregated Kinesis records, built by awslabs' aws-kinesis-agg (a writer nobody here wrote),
 * come apart into their user records in order; anything else is an ordinary record.
 */
import { createHash } from 'node:crypto';
import { deaggregate, isAggregated, MalformedAggregateError } from '../../lib/aws/kinesis/kpl';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const agg = require('aws-kinesis-agg') as {
  aggregate(
    records: Array<{ partitionKey: string; explicitHashKey?: string; data: Buffer }>,
    onEncoded: (r: { partitionKey: string; data: Buffer }, done: (err?: Error) => void) => void,
    afterAll: () => void,
    onError: (e: Error) => void,
  ): void;
};

function aggregate(records: Array<{ partitionKey: string; explicitHashKey?: string; data: string }>): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    agg.aggregate(
      records.map((r) => ({ ...r, data: Buffer.from(r.data) })),
      (encoded, done) => {
        out.push(Buffer.from(encoded.data));
        done();
      },
      () => resolve(out),
      reject,
    );
  });
}

describe('KPL deaggregation', () => {
  it('gives the user records of an aggregated record in order, with their partition keys and sub-sequence numbers', async () => {
    const users = Array.from({ length: 50 }, (_, i) => ({ partitionKey: `user-${i % 7}`, data: JSON.stringify({ user: `u${i}`, amount: i }) }));
    const [record, ...rest] = await aggregate(users);
    expect(rest).toHaveLength(0);
    const got = deaggregate(record)!;
    expect(got.map((u) => [u.partitionKey, Buffer.from(u.data).toString(), u.subSequenceNumber])).toEqual(users.map((u, i) => [u.partitionKey, u.data, i]));
  });

  it('keeps explicit hash keys', async () => {
    const [record] = await aggregate([
      { partitionKey: 'a', explicitHashKey: '170141183460469231731687303715884105728', data: 'x' },
      { partitionKey: 'b', data: 'y' },
    ]);
    const got = deaggregate(record)!;
    expect(got[0].explicitHashKey).toBe('170141183460469231731687303715884105728');
    expect(got[1].explicitHashKey).toBeUndefined();
  });

  it('leaves an ordinary record alone: JSON, a short payload, the magic with a wrong digest', async () => {
    expect(deaggregate(Buffer.from('{"user":"a"}'))).toBeNull();
    expect(deaggregate(Buffer.from([0xf3, 0x89]))).toBeNull();
    const [record] = await aggregate([{ partitionKey: 'a', data: 'x' }]);
    const tampered = Buffer.from(record);
    tampered[tampered.length - 1] ^= 0xff;
    expect(isAggregated(tampered)).toBe(false);
    expect(deaggregate(tampered)).toBeNull();
  });

  it('refuses an aggregate whose digest matches but whose records are cut short', () => {
    const body = Buffer.from([0x0a, 0x01, 0x61, 0x1a, 0x05, 0x08, 0x00, 0x1a, 0x09]); // data says 9 bytes, has none
    const digest = createHash('md5').update(body).digest();
    const record = Buffer.concat([Buffer.from([0xf3, 0x89, 0x9a, 0xc2]), body, digest]);
    expect(() => deaggregate(record)).toThrow(MalformedAggregateError);
  });
});
