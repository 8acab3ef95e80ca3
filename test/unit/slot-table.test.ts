import { SlotTable } from '../../lib/engine/operators/slot-table';

/** A deterministic stream of numbers in [0, 1). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Object.is, as toBe compares, for the loops of thousands of lookups below (an expect call each
 * costs more than the lookup): the differences are kept (the first 20), and the test expects none
 * at its end.
 */
function differences() {
  const found: string[] = [];
  const show = (v: unknown) => (Object.is(v, -0) ? '-0' : typeof v === 'string' ? JSON.stringify(v) : String(v));
  return {
    found,
    same: (what: string, got: unknown, want: unknown) => {
      if (Object.is(got, want)) return;
      if (found.length < 20) found.push(`${what}: ${show(got)}, expected ${show(want)}`);
      else if (found.length === 20) found.push('(and more)');
    },
  };
}

describe('SlotTable', () => {
  it('answers as a Map would over random sets, gets and deletes of every kind of grouping value', () => {
    const rand = lcg(42);
    const long = 'x'.repeat(70);
    // strings (short, empty, long, look-alike numbers), numbers (NaN, -0 and 0, which a Map treats as one), null, booleans
    const pool: unknown[] = ['', 'a', 'b', '1', long, `${long}y`, null, 1, -0, 0, NaN, Infinity, true, false];
    for (let i = 0; i < 3000; i++) pool.push(`user-${i}`);
    const table = new SlotTable();
    const map = new Map<unknown, number>();
    let nextSlot = 0;
    const { found, same } = differences();
    for (let step = 0; step < 60_000; step++) {
      const key = pool[Math.floor(rand() * pool.length)];
      const r = rand();
      if (r < 0.5) {
        same(`step ${step}: get(${String(key)})`, table.get(key), map.get(key));
      } else if (r < 0.8) {
        if (!map.has(key)) {
          map.set(key, nextSlot);
          table.set(key, nextSlot++);
        }
      } else {
        same(`step ${step}: delete(${String(key)})`, table.delete(key), map.delete(key));
      }
      if (step % 997 === 0) same(`step ${step}: size`, table.size, map.size);
    }
    for (const key of pool) same(`at the end: get(${String(key)})`, table.get(key), map.get(key));
    expect(found).toEqual([]);
    expect(table.size).toBe(map.size);
    expect(map.size).toBeGreaterThan(500);
  });

  it('tells apart keys whose characters pack alike: NUL padding, characters past U+00FF, lengths around the inline limit', () => {
    const keys = [
      '',
      '\u0000',
      '\u0000\u0000',
      'a',
      'a\u0000',
      '\u0141',
      'A\u0001',
      'A\u0141',
      '\u00ff',
      '\uffff',
      '\ud83d\ude00',
      'x'.repeat(19),
      'x'.repeat(20),
      'x'.repeat(21),
      `${'x'.repeat(19)}\u0100`,
      `${'x'.repeat(19)}\u00ff`,
      'é'.repeat(20),
      'é'.repeat(21),
    ];
    const table = new SlotTable(2);
    keys.forEach((k, i) => table.set(k, i));
    expect(table.size).toBe(keys.length);
    // each looked up by a fresh copy of its characters, not the stored string object
    keys.forEach((k, i) => expect(table.get(k.split('').join(''))).toBe(i));
    for (const k of ['\u0000\u0000\u0000', 'b', 'a\u0001', '\u0142', 'x'.repeat(22), `${'x'.repeat(20)}\u0000`]) expect(table.get(k)).toBeUndefined();
    expect(table.delete('\u0141')).toBe(true);
    expect(table.get('A\u0001')).toBe(keys.indexOf('A\u0001'));
    expect(table.get('\u0141')).toBeUndefined();
  });

  it('tells apart strings of the same hash bucket and finds them after the table grows', () => {
    const table = new SlotTable(2);
    for (let i = 0; i < 10_000; i++) table.set(`k${i}`, i);
    expect(table.size).toBe(10_000);
    const { found, same } = differences();
    for (let i = 0; i < 10_000; i++) same(`get(k${i})`, table.get(`k${i}`), i);
    expect(found).toEqual([]);
    expect(table.get('k10000')).toBeUndefined();
    // a key made fresh (not the same string object) is found by its characters
    expect(table.get(['k', '9', '9', '9', '9'].join(''))).toBe(9999);
  });

  it('keeps working when keys come and go far more often than the table holds (deleted entries are reclaimed)', () => {
    const table = new SlotTable();
    const { found, same } = differences();
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 100; i++) table.set(`r${round}-${i}`, i);
      for (let i = 0; i < 100; i++) same(`delete(r${round}-${i})`, table.delete(`r${round}-${i}`), true);
      same(`round ${round}: size`, table.size, 0);
    }
    expect(found).toEqual([]);
    table.set('last', 7);
    expect(table.get('last')).toBe(7);
    expect(table.get('r199-5')).toBeUndefined();
  });
});
