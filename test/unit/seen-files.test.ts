/**
 * The landing source's seen files (lib/aws/s3/seen-files.ts) with chosen LastModified times,
 * which S3 itself never lets a test choose: Spark's FileStreamSource rules worked by hand.
 */
import { addSeen, compacted, emptySeen, hasSeen, newFileRules, newFiles, stillNew, takeBatch } from '../../lib/aws/s3/seen-files';

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

describe('a snapshot read back (the base, in key order) with the files read since', () => {
  const base: Array<[string, number]> = [
    ['a/1', T - 2 * DAY],
    ['a/2', T - DAY],
    ['b/1', T],
  ];

  it('a key is seen when in the base (found by binary search) or read since; others are not', () => {
    const seen = emptySeen(null, base);
    addSeen(seen, [file('a/0', T)]);
    for (const k of ['a/0', 'a/1', 'a/2', 'b/1']) expect(hasSeen(seen, k)).toBe(true);
    for (const k of ['', 'a', 'a/15', 'b/0', 'b/2', 'c']) expect(hasSeen(seen, k)).toBe(false);
  });

  it("a compaction merges the base, the files since and a batch's files in key order, forgets the old, and a key read since wins", () => {
    const seen = emptySeen(null, base);
    addSeen(seen, [file('a/15', T + DAY), file('a/2', T + DAY)]);
    const batch = [file('c/1', T + 2 * DAY), file('0', T - 9 * DAY), file('a/3', T + DAY)];
    seen.newestMs = T + 2 * DAY; // counting the batch's files, as SeenLogs.write does
    expect(compacted(seen, 3 * DAY, batch)).toEqual([
      ['a/15', T + DAY],
      ['a/2', T + DAY],
      ['a/3', T + DAY],
      ['b/1', T],
      ['c/1', T + 2 * DAY],
    ]);
  });
});

describe('the order batches take them, whatever the order candidates come in', () => {
  it('candidates in key order or shuffled give the same order (ties by key)', () => {
    let x = 7;
    const rnd = () => (x = (x * 48271) % 2147483647);
    const keys = Array.from({ length: 300 }, (_, i) => `k/${String(i).padStart(3, '0')}`);
    const cands = keys.map((k) => file(k, T + (rnd() % 5) * 1000));
    const shuffled = [...cands].sort(() => (rnd() % 3) - 1);
    for (const latestFirst of [false, true]) {
      const r = { ...rules, latestFirst };
      const ordered = newFiles(emptySeen(), cands, r).map((f) => f.key);
      expect(newFiles(emptySeen(), shuffled, r).map((f) => f.key)).toEqual(ordered);
      // by time, ties by ascending key
      const check = [...cands].sort(
        (a, b) => (latestFirst ? b.lastModifiedMs - a.lastModifiedMs : a.lastModifiedMs - b.lastModifiedMs) || (a.key < b.key ? -1 : 1),
      );
      expect(ordered).toEqual(check.map((f) => f.key));
    }
  });

  it("what a batch left stays new, but for files now older than maxFileAge before the batch's newest", () => {
    const seen = emptySeen();
    addSeen(seen, [file('new', T + 8 * DAY)]);
    const rest = [file('old', T), file('recent', T + 2 * DAY)];
    expect(stillNew(seen, rest, rules).map((f) => f.key)).toEqual(['recent']);
    expect(stillNew(seen, rest, { ...rules, ignoreAge: true }).map((f) => f.key)).toEqual(['old', 'recent']);
  });
});

describe("Spark's SeenFilesMap: purged entries and fileNameOnly", () => {
  it('a key rewritten after its entry fell out of maxFileAge is new again; within it, seen (not re-read)', () => {
    const seen = emptySeen();
    addSeen(seen, [file('a', T), file('b', T + 10 * DAY)]);
    // a was read at T, the newest seen is T+10d: a's entry is purged (older than 7 days before it)
    expect(newFiles(seen, [file('a', T + 11 * DAY), file('b', T + 11 * DAY)], rules).map((f) => f.key)).toEqual(['a']);
    // with latestFirst and a limit Spark ignores maxFileAge: nothing is purged
    expect(newFiles(seen, [file('a', T + 11 * DAY)], { ...rules, maxFileAgeMs: Number.POSITIVE_INFINITY, ignoreAge: true })).toEqual([]);
    // maxFileAge 0: only the entries as new as the newest stay
    expect(newFiles(seen, [file('a', T + 10 * DAY), file('b', T + 10 * DAY)], { ...rules, maxFileAgeMs: 0 }).map((f) => f.key)).toEqual(['a']);
  });

  it('fileNameOnly: a name read in any folder is seen; one batch may take two files of one name', () => {
    const named = { ...rules, fileNameOnly: true };
    expect(newFiles(emptySeen(), [file('dt=1/part-0', T), file('dt=2/part-0', T)], named).map((f) => f.key)).toEqual(['dt=1/part-0', 'dt=2/part-0']);
    const seen = emptySeen(null, [['dt=1/part-0', T]]);
    addSeen(seen, [file('dt=2/part-1', T)]);
    const cands = [file('dt=3/part-0', T + 1), file('dt=3/part-1', T + 1), file('dt=3/part-2', T + 1)];
    expect(newFiles(seen, cands, named).map((f) => f.key)).toEqual(['dt=3/part-2']);
    expect(newFiles(seen, cands, rules).map((f) => f.key)).toEqual(['dt=3/part-0', 'dt=3/part-1', 'dt=3/part-2']);
    // a later batch of the same run: a name the batch before took is seen (Spark lists again per batch)
    const rest = [file('dt=4/part-0', T + 2), file('dt=4/part-5', T + 2)];
    expect(stillNew(seen, rest, named, [file('dt=9/part-0', T + 1)]).map((f) => f.key)).toEqual(['dt=4/part-5']);
    expect(stillNew(seen, rest, rules, [file('dt=9/part-0', T + 1)]).map((f) => f.key)).toEqual(['dt=4/part-0', 'dt=4/part-5']);
  });
});

describe('newFileRules: maxFileAge is ignored with latestFirst and a limit the query sets (FileStreamSource)', () => {
  it.each([
    [true, { maxFilesPerTrigger: 1 }, true],
    [true, { maxBytesPerTrigger: 1000 }, true],
    [true, {}, false],
    [false, { maxFilesPerTrigger: 1 }, false],
    [false, { maxBytesPerTrigger: 1000 }, false],
  ])('latestFirst %s with %j: ignored %s', (latestFirst, limits, ignored) => {
    const r = newFileRules({ maxFileAgeMs: DAY, latestFirst, fileNameOnly: false }, limits);
    expect(r.ignoreAge).toBe(ignored);
    expect(r.maxFileAgeMs).toBe(ignored ? Number.POSITIVE_INFINITY : DAY);
  });
});
