/**
 * Which keys under a landing prefix are files of the stream, and with which partition values
 * (lib/aws/s3/file-rules.ts), worked by hand from Spark's partition discovery
 * (PartitioningUtils.parsePartition / parsePartitions / resolvePartitions and
 * HadoopFSUtils.shouldFilterOutPathName).
 */
import { checkLayout, classifyKey, compileGlob, type FileShape, partitionValues } from '../../lib/aws/s3/file-rules';
import { parseSchema } from '../../lib/engine/schema';

const plain = { recursiveFileLookup: false, glob: null };

describe('classifyKey: the walk up from a file folder (parsePartition)', () => {
  it.each([
    // key, kind, partitions, base
    ['a.json', 'file', [], ''],
    ['dt=2026-10-01/a.json', 'file', [['dt', '2026-10-01']], ''],
    [
      'dt=1/hour=2/a.json',
      'file',
      [
        ['dt', '1'],
        ['hour', '2'],
      ],
      '',
    ],
    // a folder without '=' under a partition folder: the walk goes past it
    ['dt=1/extra/a.json', 'file', [['dt', '1']], ''],
    // a partition folder under a plain folder: the walk stops there, the base is that folder
    ['sub/dt=1/a.json', 'file', [['dt', '1']], 'sub'],
    ['x/dt=1/y/hour=2/a.json', 'file', [['hour', '2']], 'x/dt=1/y'],
    // no partition folder: not read without recursiveFileLookup
    ['2026/10/a.json', 'subfolder', undefined, '2026/10'],
    // Hive escapes, the Hive null, a '_' folder holding '='
    [
      'k=a%20b/v=%3D/a.json',
      'file',
      [
        ['k', 'a b'],
        ['v', '='],
      ],
      '',
    ],
    ['k=__HIVE_DEFAULT_PARTITION__/a.json', 'file', [['k', '__HIVE_DEFAULT_PARTITION__']], ''],
    ['_k=1/a.json', 'file', [['_k', '1']], ''],
  ])('%s is a %s', (key, kind, partitions, base) => {
    const k = classifyKey(key, plain);
    expect(k.kind).toBe(kind);
    if (k.kind === 'file') expect(k.partitions).toEqual(partitions);
    if (k.kind === 'file' || k.kind === 'subfolder') expect(k.shape?.base).toBe(base);
  });

  it.each([['_SUCCESS'], ['.a.json.crc'], ['a.json._COPYING_'], ['_temporary/0/a.json'], ['dt=1/.hidden/a.json'], ['dt=1/'], ['_metadata']])(
    '%s is never read',
    (key) => {
      expect(classifyKey(key, plain).kind).toBe('hidden');
    },
  );

  it("Spark's listing keeps folders named _metadata... and _common_metadata...: read with recursiveFileLookup", () => {
    const recursive = { recursiveFileLookup: true, glob: null };
    expect(classifyKey('_metadata/a.json', recursive).kind).toBe('file');
    expect(classifyKey('_common_metadata_x/a.json', recursive).kind).toBe('file');
    expect(classifyKey('_other/a.json', recursive).kind).toBe('hidden');
    expect(classifyKey('dt=1/a.json', recursive)).toEqual({ kind: 'file', partitions: [], shape: null });
  });

  it('an empty partition column name or value is refused, as Spark asserts', () => {
    expect(() => classifyKey('dt=/a.json', plain)).toThrow(/Empty partition column value in 'dt='/);
    expect(() => classifyKey('=1/a.json', plain)).toThrow(/Empty partition column name in '=1'/);
  });

  it('pathGlobFilter matches the name only; a filtered file still has its shape', () => {
    const rules = { recursiveFileLookup: false, glob: compileGlob('{a,b}[0-9]?.js[!x]') };
    expect(classifyKey('dt=1/a12.jsy', rules).kind).toBe('file');
    expect(classifyKey('b9z.jsn', rules).kind).toBe('file');
    expect(classifyKey('b1.jsy', rules).kind).toBe('filtered');
    expect(classifyKey('a12.jsx', rules).kind).toBe('filtered');
    expect(classifyKey('a=1/c12.jsy', rules)).toMatchObject({ kind: 'filtered', shape: { columns: ['a'] } });
  });
});

describe('checkLayout: one base and one list of columns (parsePartitions, resolvePartitions)', () => {
  const shapes = (...keys: string[]): FileShape[] =>
    keys.map((k) => {
      const c = classifyKey(k.replace(/^!/, ''), { recursiveFileLookup: false, glob: k.startsWith('!') ? /^$/ : null });
      return c.kind === 'hidden' ? (null as never) : (c.shape as FileShape);
    });

  it.each([
    [['a.json', 'b.json', 'sub/c.json']],
    [['dt=1/a.json', 'dt=2/b.json', 'dt=2/extra/c.json']],
    // column names compare case-insensitively (spark.sql.caseSensitive false)
    [['DT=1/a.json', 'dt=2/b.json']],
    // all below the same plain folder
    [['sub/dt=1/a.json', 'SUB/dt=2/b.json']],
    // a root file the glob leaves out is never listed
    [['!readme.txt', 'dt=1/a.json']],
  ])('%j is one layout', (keys) => {
    expect(() => checkLayout(shapes(...keys), 'p')).not.toThrow();
  });

  it.each([
    [['a.json', 'dt=1/b.json'], /Conflicting directory structures detected/],
    [['sub/a.json', 'dt=1/b.json'], /Conflicting directory structures detected/],
    [['x/dt=1/a.json', 'dt=1/b.json'], /Conflicting directory structures detected/],
    [['a=1/x.json', 'b=2/y.json'], /Conflicting partition column names detected.*list #0: a .*list #1: b /],
    [['a=1/x.json', 'a=1/b=2/y.json'], /Conflicting partition column names detected/],
    // a file the glob leaves out still counts in Spark's discovery
    [['!a=1/x.txt', 'b=2/y.json'], /Conflicting partition column names detected/],
  ])('%j is refused', (keys, message) => {
    expect(() => checkLayout(shapes(...keys), 'p')).toThrow(message);
  });
});

describe('partitionValues: a folder names a declared column whatever its case', () => {
  it("takes the schema's name and type", () => {
    const schema = parseSchema('user STRING, dt DATE, Hour INT');
    expect(
      partitionValues(schema, [
        ['DT', '2026-10-01'],
        ['hour', '05'],
      ]),
    ).toEqual({
      values: [
        ['dt', '2026-10-01'],
        ['Hour', 5],
      ],
    });
    expect(partitionValues(schema, [['other', 'x']])).toEqual({ values: [] });
  });
});
