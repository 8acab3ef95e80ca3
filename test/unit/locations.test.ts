import { checkOutsideSource, prefixContains } from '../../lib/aws/locations';
import { InvalidOptionError } from '../../lib/engine/errors';

describe('locations written by a pipeline and its S3 source', () => {
  const source = (prefix: string) => ({ name: 'the source', bucket: 'b', prefix });

  it('a source of the whole bucket contains every prefix of it', () => {
    expect(prefixContains('', '_sluice/q/checkpoint')).toBe(true);
    expect(() => checkOutsideSource(source(''), [{ name: '--checkpoint', bucket: 'b', prefix: '_sluice/q/checkpoint' }])).toThrow(
      /--checkpoint s3:\/\/b\/_sluice\/q\/checkpoint overlaps the source the whole bucket b.*give the source a prefix of its own/,
    );
  });

  it('refuses a location nested in the source prefix, or one that holds it', () => {
    expect(() => checkOutsideSource(source('landing'), [{ name: 'the sink', bucket: 'b', prefix: 'landing/out' }])).toThrow(InvalidOptionError);
    expect(() => checkOutsideSource(source('landing/events'), [{ name: 'the dead-letter prefix', bucket: 'b', prefix: 'landing' }])).toThrow(
      /the dead-letter prefix/,
    );
  });

  it('accepts siblings that share a name prefix but not a folder, and other buckets', () => {
    expect(prefixContains('landing', 'landing2/x')).toBe(false);
    expect(() =>
      checkOutsideSource(source('landing'), [
        { name: '--checkpoint', bucket: 'b', prefix: 'landing2/checkpoint' },
        { name: 'the sink', bucket: 'other', prefix: 'landing' },
        { name: 'the dead-letter prefix', bucket: 'b', prefix: '_sluice/q/dead-letter' },
      ]),
    ).not.toThrow();
  });
});
