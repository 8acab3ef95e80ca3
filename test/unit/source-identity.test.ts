/**
 * The identity a run records for its source (Source.description) is the one the CLI computes
 * for `--source` (sourceIdentity): `sluice status` and `show` refuse a checkpoint whose recorded
 * source differs, so the two must agree for every way a prefix is written.
 */
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { S3Client } from '@aws-sdk/client-s3';
import { KinesisSource } from '../../lib/aws/kinesis/source';
import { S3LandingSource } from '../../lib/aws/s3/landing-source';
import { sourceIdentity } from '../../lib/aws/source-identity';
import { parseSchema } from '../../lib/engine/schema';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';

const schema = parseSchema('id STRING');
const config = { region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };

describe('sourceIdentity', () => {
  it.each([
    ['landing', 's3://bucket/landing/'],
    ['/landing/', 's3://bucket/landing/'],
    ['a/b//', 's3://bucket/a/b/'],
    ['', 's3://bucket/'],
  ])('of S3 prefix %j is %s, the landing source description', (prefix, identity) => {
    expect(sourceIdentity({ kind: 's3', bucket: 'bucket', prefix })).toBe(identity);
    const source = new S3LandingSource({ client: new S3Client(config), bucket: 'bucket', prefix, schema, checkpoint: new InMemoryCheckpoint() });
    expect(source.description).toBe(identity);
  });

  it("of a Kinesis stream is kinesis://<stream>, the Kinesis source's description", () => {
    expect(sourceIdentity({ kind: 'kinesis', streamName: 'events' })).toBe('kinesis://events');
    expect(new KinesisSource({ client: new KinesisClient(config), streamName: 'events', schema }).description).toBe('kinesis://events');
  });
});
