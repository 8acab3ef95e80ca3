/**
 * The landing source's seen files (lib/aws/s3/seen-files.ts) with chosen LastModified times,
 * which S3 itself never lets a test choose: Spark's FileStreamSource rules worked by hand.
 */
import { addSeen, compacted, emptySeen, newFiles, takeBatch } from '../../lib/aws/s3/seen-files';

const DAY = 86_400_000;
const T = Date.UTC(2026, 9, 1);
const file = (key: string, lastModifiedMs: number, size = 10) => ({ key, size, lastModifiedMs });
const rules = { maxFileAgeMs: 7 * DAY, latestFirst: false, ignoreAge: false };

describe('which files are new', () => {
  it('before any file is seen, every file is new, however old (a first listing takes all)', () => {
    expect(newFiles(emptySeen(), [file('a', T - 30 * DAY), file('b', T)], rules).map((f) => f.key)).toEqual(['a', 'b']);
  });

  it('a file older than maxFileAge before the newest seen is not new; one just within is', () => {
    const seen = emptySeen();
    addSeen(seen, [file('x', T)]);
    const cands = [file('old', T - 7 * DAY - 1), file('edge', T - 7 * DAY), file('x', T)];
    expect(newFiles(seen, cands, rules).map((f) => f.key)).toEqual(['edge']);
    // Spark ignores maxFileAge with latestFirst and maxFilesPerTrigger
    expect(newFiles(seen, cands, { ...rules, ignoreAge: true }).map((f) => f.key)).toEqual(['old', 'edge']);
  });

  it('a migrated {lastKey} checkpoint: keys up to lastKey count as seen', () => {
    expect(newFiles(emptySeen('m'), [file('a', T), file('m', T), file('n', T)], rules).map((f) => f.key)).toEqual(['n']);
  });
});

describe('the order batches take them', () => {
  const cands = [file('c', T), file('a', T + 1), file('b', T + 1), file('d', T + 2)];
  it('oldest first, ties by ascending key', () => {
    expect(newFiles(emptySeen(), cands, rules).map((f) => f.key)).toEqual(['c', 'a', 'b', 'd']);
  });
  it('latestFirst: newest first, ties still by ascending key', () => {
    expect(newFiles(emptySeen(), cands, { ...rules, latestFirst: true }).map((f) => f.key)).toEqual(['d', 'a', 'b', 'c']);
  });
  it('a batch takes files up to both limits, at least one however big', () => {
    const ordered = [file('a', T, 50), file('b', T, 50), file('c', T, 500), file('d', T, 1)];
    expect(takeBatch(ordered, 3, 120).map((f) => f.key)).toEqual(['a', 'b']);
    expect(takeBatch(ordered.slice(2), 3, 120).map((f) => f.key)).toEqual(['c']);
    expect(takeBatch(ordered, 1, Infinity).map((f) => f.key)).toEqual(['a']);
  });
});

describe('a compaction', () => {
  it('keeps the files within maxFileAge of the newest, in key order, and forgets older ones', () => {
    const seen = emptySeen();
    addSeen(seen, [file('z', T), file('old', T - 8 * DAY), file('b', T - DAY)]);
    expect(compacted(seen, 7 * DAY)).toEqual([
      ['b', T - DAY],
      ['z', T],
    ]);
  });
});
