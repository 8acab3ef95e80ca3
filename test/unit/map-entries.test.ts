/**
 * A MAP value's entries keep the order they were built in (Spark's ArrayBasedMapData is a key
 * array and a value array), where a plain JS object lists integer-like names first, ascending.
 */
import { entryValue as apiEntryValue, mapEntries as apiMapEntries, readStream, setEntry as apiSetEntry } from '../../lib/api/query';
import { entryValue, hasEntry, keyOfStored, mapEntries, mapKeys, setEntry, storedKey } from '../../lib/engine/map-entries';
import { runPlanOnce } from '../helpers/run-plan';

const KEYS = ['b', '10', 'a', '2', '0', '01', '4294967295', '12345678901', '', '-1', '1.5', '\u0000', '\u00003', '\u0000x', '__proto__', 'constructor'];

function built(keys: readonly string[]): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  keys.forEach((k, i) => setEntry(m, k, i));
  return m;
}

describe('map entries', () => {
  it('store each key under a name that reads back as the key, one name per key', () => {
    for (const k of KEYS) expect(keyOfStored(storedKey(k))).toBe(k);
    expect(new Set(KEYS.map(storedKey)).size).toBe(KEYS.length);
  });

  it('keep the order they were set in, integer-like keys included', () => {
    const m = built(KEYS);
    expect(mapKeys(m)).toEqual(KEYS);
    expect(mapEntries(m)).toEqual(KEYS.map((k, i) => [k, i]));
    expect(Object.values(m)).toEqual(KEYS.map((_, i) => i));
    // a plain object would not: '0', '2', '10' and '4294967295'... come first
    expect(Object.keys(Object.fromEntries(KEYS.map((k) => [k, 1])))).not.toEqual(KEYS);
  });

  it('are found by their key, "__proto__" as data, and absent keys are not', () => {
    const m = built(KEYS);
    KEYS.forEach((k, i) => {
      expect(hasEntry(m, k)).toBe(true);
      expect(entryValue(m, k)).toBe(i);
    });
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    for (const k of ['c', '3', '00', 'toString']) {
      expect(hasEntry(m, k)).toBe(false);
      expect(entryValue(m, k)).toBeUndefined();
    }
  });

  it('keep their order and keys through JSON (the state, the shuffle, a checkpoint)', () => {
    const back = JSON.parse(JSON.stringify(built(KEYS.filter((k) => k !== '__proto__')))) as object;
    expect(mapKeys(back)).toEqual(KEYS.filter((k) => k !== '__proto__'));
    expect(entryValue(back, '10')).toBe(1);
  });

  it('of a map written before keys were marked (a plain object) are still found', () => {
    const old = JSON.parse('{"b": 1, "10": 2}') as object;
    expect(entryValue(old, '10')).toBe(2);
    expect(hasEntry(old, '10')).toBe(true);
    expect(entryValue(old, 'b')).toBe(1);
    expect(mapKeys(old).sort()).toEqual(['10', 'b']);
  });
});

describe('a withColumn function reading a MAP column', () => {
  it('reads its entries in order and its values by key, and builds one, through the exported helpers', async () => {
    const plan = readStream
      .format('json')
      .schema('id INT, attrs MAP<STRING, INT>')
      .load('s3://bucket/in/')
      .withColumn('keys', 'STRING', (r) =>
        apiMapEntries(r.attrs as object)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(','),
      )
      .withColumn('ten', 'INT', (r) => (apiEntryValue(r.attrs as object, '10') ?? null) as number | null)
      .withColumn('reversed', 'MAP<STRING, INT>', (r) => {
        const m: Record<string, unknown> = {};
        for (const [k, v] of apiMapEntries(r.attrs as object).reverse()) apiSetEntry(m, k, v);
        return m;
      })
      .selectExpr('id', 'attrs', 'keys', 'ten', 'map_keys(reversed) AS reversed_keys')
      .writeStream.queryName('map-fn')
      .plan();
    const { rows } = await runPlanOnce(plan, '{"id": 1, "attrs": {"b": 1, "10": 2, "a": 3}}\n{"id": 2, "attrs": {"3": 4}}');
    expect(rows.map((r) => [r.id, r.keys, r.ten, r.reversed_keys])).toEqual([
      [1, 'b=1,10=2,a=3', 2, ['a', '10', 'b']],
      [2, '3=4', null, ['3']],
    ]);
    // the output rows hold the keys' texts (a JS object lists "10" first again)
    expect(rows[0].attrs).toEqual({ b: 1, 10: 2, a: 3 });
  });
});
