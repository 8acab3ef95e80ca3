/**
 * Which error details the Lambda handler keeps out of its logs (lib/aws/lambda/redact.ts): data
 * values (state and sink keys of grouping values, rows, records) go, object keys under the
 * pipeline's own S3 prefixes and bookkeeping (batch ids, versions, sizes) stay.
 */
import { REDACTED, redactDataValues, scrubText } from '../../lib/aws/lambda/redact';

/** A state key id: the JSON of the grouping values, as the operators build it. */
const stateId = (...kv: unknown[]) => JSON.stringify(kv);

describe('when the details hold a state key built from grouping values', () => {
  const id = stateId('acct-9931', { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' });
  const message = `state key \`${id}\` of operator \`agg-0\` is already at version 7, ahead of batch 5: use a new namespace`;

  it('replaces the key with <redacted> in the details and in the message, and keeps the bookkeeping', () => {
    const r = redactDataValues(message, { operatorId: 'agg-0', key: id, stateVersion: 7, batchId: 5 });
    expect(r.details).toEqual({ operatorId: 'agg-0', key: REDACTED, stateVersion: 7, batchId: 5 });
    expect(r.message).toBe('state key `<redacted>` of operator `agg-0` is already at version 7, ahead of batch 5: use a new namespace');
    expect(r.fields).toEqual(['key']);
  });

  it('also cuts a truncated, JSON-quoted copy of the key and a grouping value quoted alone', () => {
    const long = stateId('x'.repeat(100), 'acct-9931');
    const text = `state key id is 1100 bytes (${JSON.stringify(long.slice(0, 80))}...); account acct-9931 is too long: group by shorter keys`;
    const r = redactDataValues(text, { key: long.slice(0, 200) });
    expect(r.message).not.toMatch(/xxxx|acct-9931/);
    expect(r.message).toBe('state key id is 1100 bytes ("<redacted>"...); account <redacted> is too long: group by shorter keys');
  });

  it('leaves short values in the message, which would match ordinary words and numbers', () => {
    expect(scrubText('batch 12 of 12 rows', ['12'])).toBe('batch 12 of 12 rows');
  });
});

describe('when the details name S3 objects of the pipeline', () => {
  const objectPrefixes = ['checkpoints/orders', 'landing/orders'];

  it('keeps a key under one of its prefixes, which names a checkpoint entry or landing file', () => {
    const details = { batchId: 3, key: 'landing/orders/2026/10/01/part-7.json', loggedEtag: '"a"', etag: '"b"' };
    const message = 'file s3://b/landing/orders/2026/10/01/part-7.json of batch 3 changed since the batch was planned';
    expect(redactDataValues(message, details, { objectPrefixes })).toEqual({ message, details, fields: [], values: [] });
  });

  it('redacts a key outside them', () => {
    expect(redactDataValues('m', { key: 'landing/other/x.json' }, { objectPrefixes }).details).toEqual({ key: REDACTED });
    expect(redactDataValues('m', { key: 'landing/orders-old/x.json' }, { objectPrefixes }).details).toEqual({ key: REDACTED });
  });
});

describe('when data sits deeper in the details', () => {
  it('redacts rows, records and values at any depth, naming each path', () => {
    const details = {
      batchId: 2,
      chunk: { index: 1, rows: [{ user: 'u-778812', total: 5 }], marker: { rowCount: 98 } },
      deadLetters: [{ raw: '{"user":"u-778812","amount":"x"}', reason: 'amount is not a DOUBLE' }],
      values: ['u-778812'],
    };
    const r = redactDataValues('batch 2 chunk 1 of user u-778812 differs from its marker', details);
    expect(r.details).toEqual({
      batchId: 2,
      chunk: { index: 1, rows: REDACTED, marker: { rowCount: 98 } },
      deadLetters: [{ raw: REDACTED, reason: 'amount is not a DOUBLE' }],
      values: REDACTED,
    });
    expect(r.fields).toEqual(['chunk.rows', 'deadLetters[0].raw', 'values']);
    expect(r.message).toBe('batch 2 chunk 1 of user <redacted> differs from its marker');
  });

  it('leaves details without data unchanged', () => {
    const details = { operatorId: 'dedup-1', stored: { shards: 4, granularityMs: 60_000 }, given: { shards: 8, granularityMs: 60_000 } };
    expect(redactDataValues('layout differs', details)).toEqual({ message: 'layout differs', details, fields: [], values: [] });
  });
});
