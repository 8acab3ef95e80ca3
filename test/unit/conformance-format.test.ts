/**
 * The case format is checked, not guessed at: a key FORMAT.md / FORMAT-2.md does not define is
 * refused with its name and place, `expectError` cases pass only on the expected refusal, and a
 * FORMAT-2 pipeline case's result carries stateRows per stage.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { caseToPlan, parseCase, stepInputFiles } from '../../lib/conformance/case';
import { compareCase } from '../../lib/conformance/results';
import { runCaseInMemory } from '../helpers/memory-case';
import { kinesisCaseSource } from '../../lib/conformance/kinesis';

const base = {
  name: 'format-check',
  query: {
    schema: 'k STRING, t TIMESTAMP',
    watermark: { column: 't', delay: '10 seconds' },
    groupBy: ['k'],
    aggregations: [{ fn: 'count', as: 'n' }],
    outputMode: 'update',
  },
  steps: [{ add: [{ k: 'a', t: '2026-10-01 12:00:00' }], expect: { rows: [{ k: 'a', n: 1 }] } }],
};
const parse = (c: unknown) => parseCase(JSON.stringify(c), 'case.json');

describe('when a case has a key the format does not define', () => {
  it.each([
    ['the case', { ...base, extra: 1 }, '"extra" in the case'],
    ['the query', { ...base, query: { ...base.query, windowing: 'x' } }, '"windowing" in "query"'],
    ['a step', { ...base, steps: [{ ...base.steps[0], note: 'x' }] }, '"note" in step 1'],
    ['an expectation', { ...base, steps: [{ add: [], expect: { rows: [], stateRow: 1 } }] }, '"stateRow" in step 1.expect'],
    ['a stage', { ...base, query: { schema: 'k STRING', pipeline: [{ having: 'k > 1' }], outputMode: 'append' } }, '"having" in "query.pipeline"[0]'],
    [
      'a join',
      { ...base, query: { schema: 'k STRING', pipeline: [{ join: { with: 't', type: 'inner', on: ['k'], using: 'x' } }], outputMode: 'append' } },
      '"using" in "query.pipeline"[0].join',
    ],
    [
      'a window',
      { ...base, query: { ...base.query, groupBy: [{ window: { column: 't', duration: '1 minute', size: 2 } }] } },
      '"size" in "query.groupBy"[0].window',
    ],
  ])('refuses a key in %s, naming it and where it is', (_where, c, text) => {
    expect(() => parse(c)).toThrow(text);
  });

  it('refuses a pipeline query that also has query-level groupBy', () => {
    expect(() => parse({ ...base, query: { ...base.query, pipeline: [{ dropDuplicates: {} }] } })).toThrow('a query with "pipeline" has no groupBy');
  });

  it('refuses a case with both expectError and steps', () => {
    expect(() => parse({ ...base, expectError: 'is not supported' })).toThrow('either "expectError" or "steps"');
  });

  it('refuses addTo in a query without named inputs', () => {
    expect(() => parse({ ...base, steps: [{ addTo: { left: [] }, expect: {} }] })).toThrow('addTo/filesTo, which need named "inputs"');
  });
});

describe('when a case expects the query to be refused', () => {
  const refused = {
    name: 'refused',
    query: { schema: 'k STRING', dropDuplicates: { withinWatermark: true }, outputMode: 'append' },
    expectError: 'DROPDUPLICATESWITHINWATERMARK is not supported',
  };

  it('passes when the runner refuses it with the text (case-insensitive)', async () => {
    const c = parse(refused);
    const result = await runCaseInMemory(c);
    expect(result.error).toMatch(/dropDuplicatesWithinWatermark is not supported/);
    expect(compareCase(c, result)).toEqual([]);
  });

  it('fails when the query is accepted', async () => {
    const c = parse({ ...refused, query: { ...refused.query, dropDuplicates: {} } });
    expect(compareCase(c, await runCaseInMemory(c))).toEqual([expect.stringContaining('but it was accepted')]);
  });

  it('fails when it is refused for another reason', () => {
    const c = parse(refused);
    expect(compareCase(c, { name: c.name, error: 'something else' })).toEqual([expect.stringContaining('got: something else')]);
  });
});

describe('when a FORMAT-2 pipeline case has one stateful stage', () => {
  it('runs it and reports stateRows and droppedByStage as lists', async () => {
    // Window 10 s, watermark delay 0: the first file's max 12:00:15 sets the watermark to 12:00:15,
    // which closes [12:00:00, 12:00:10) (2 rows); the second file's 12:00:05 row is late.
    const c = parse({
      name: 'pipeline-one-stage',
      query: {
        schema: 'k STRING, t TIMESTAMP',
        pipeline: [
          { watermark: { column: 't', delay: '0 seconds' } },
          { groupBy: [{ window: { column: 't', duration: '10 seconds' } }], aggregations: [{ fn: 'count', as: 'n' }] },
        ],
        outputMode: 'append',
      },
      steps: [
        {
          add: [
            { k: 'a', t: '2026-10-01 12:00:01' },
            { k: 'b', t: '2026-10-01 12:00:02' },
            { k: 'c', t: '2026-10-01 12:00:15' },
          ],
          expect: { rows: [{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:00:10.000Z' }, n: 2 }], stateRows: [1], droppedByStage: [0] },
        },
        { add: [{ k: 'd', t: '2026-10-01 12:00:05' }], expect: { rows: [], stateRows: [1], droppedByWatermark: 1, droppedByStage: [1] } },
      ],
    });
    const result = await runCaseInMemory(c);
    expect(compareCase(c, result)).toEqual([]);
    expect(result.steps?.[1]).toMatchObject({ stateRows: [1], droppedByStage: [1] });
  });
});

describe('when a FORMAT-2 pipeline case has two stateful stages', () => {
  it('runs the second on what the first emits, with stateRows and droppedByStage per stage', async () => {
    // dedup by k, then a count per k (update mode): a duplicate reaches the count only once
    const c = parse({
      name: 'two-stages',
      query: {
        schema: 'k STRING, t TIMESTAMP',
        pipeline: [{ dropDuplicates: { columns: ['k'] } }, { groupBy: ['k'], aggregations: [{ fn: 'count', as: 'n' }] }],
        outputMode: 'update',
      },
      steps: [
        {
          add: [
            { k: 'a', t: '2024-01-01 00:00:01' },
            { k: 'a', t: '2024-01-01 00:00:02' },
            { k: 'b', t: '2024-01-01 00:00:03' },
          ],
          expect: {
            rows: [
              { k: 'a', n: 1 },
              { k: 'b', n: 1 },
            ],
            stateRows: [2, 2],
            droppedByStage: [0, 0],
          },
        },
        {
          add: [
            { k: 'a', t: '2024-01-01 00:00:04' },
            { k: 'c', t: '2024-01-01 00:00:05' },
          ],
          expect: { rows: [{ k: 'c', n: 1 }], stateRows: [3, 3], droppedByStage: [0, 0] },
        },
      ],
    });
    const result = await runCaseInMemory(c);
    expect(compareCase(c, result)).toEqual([]);
  });

  it("refuses an aggregation after an aggregation in update mode with Spark's correctness message", async () => {
    const c = parse({
      name: 'agg-agg-update',
      query: {
        schema: 'k STRING, t TIMESTAMP',
        pipeline: [
          { watermark: { column: 't', delay: '0 seconds' } },
          { groupBy: [{ window: { column: 't', duration: '5 seconds' } }], aggregations: [{ fn: 'count', as: 'n' }] },
          { groupBy: [{ window: { column: 'window', duration: '10 seconds' } }], aggregations: [{ fn: 'sum', column: 'n', as: 'n' }] },
        ],
        outputMode: 'update',
      },
      expectError: "Detected pattern of possible 'correctness' issue",
    });
    const result = await runCaseInMemory(c);
    expect(result.error).toMatch(/Detected pattern of possible 'correctness' issue/);
    expect(compareCase(c, result)).toEqual([]);
  });
});

describe('the public FORMAT-2 cases (when ../shared is beside the project)', () => {
  const dir = join(__dirname, '../../../shared/conformance/cases-2');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  it.each(files.length ? files : ['(none here)'])('%s parses under the strict key check', (f) => {
    if (!files.length) return expect(files).toEqual([]);
    expect(() => parseCase(readFileSync(join(dir, f), 'utf8'), f)).not.toThrow();
  });
});

describe('FORMAT-3 step files and expectations', () => {
  const q = { schema: 'id INT, src STRING', format: 'json', outputMode: 'append' };
  const caseWith = (files: unknown[], expect: Record<string, unknown> = { rows: [] }) => JSON.stringify({ name: 'f3', query: q, steps: [{ files, expect }] });

  it('a file may be rows, {rows}, or {text}, each with an optional key', () => {
    const c = parseCase(caseWith([[{ id: 1 }], { rows: [{ id: 2 }] }, { key: 'dt=1/a.json.gz', text: '{"id": 3}' }]), 'f3.json');
    expect(stepInputFiles(c.steps[0])).toEqual([
      { input: '', rows: [{ id: 1 }] },
      { input: '', rows: [{ id: 2 }] },
      { input: '', key: 'dt=1/a.json.gz', text: '{"id": 3}' },
    ]);
  });

  it.each([
    [{ rows: [], text: '' }, /exactly one of "rows"/],
    [{ key: 'a.json' }, /exactly one of "rows"/],
    [{ rows: [], name: 'x' }, /key "name" in step 1 file 1 is not part of the case format/],
    [{ rows: [], key: '/abs.json' }, /must be a key relative to the landing prefix/],
  ])('refuses the file %j', (file, text) => {
    expect(() => parseCase(caseWith([file]), 'f3.json')).toThrow(text);
  });

  it('deadLetterErrors is a list of strings', () => {
    expect(() => parseCase(caseWith([], { deadLetters: 1, deadLetterErrors: [1] }), 'f3.json')).toThrow(/deadLetterErrors must be a list of strings/);
  });

  it('the expression stages are read from a case and checked when the query is built', () => {
    const ok = parseCase(JSON.stringify({ name: 'e', query: { ...q, pipeline: [{ filter: 'id > 1' }] }, steps: [] }), 'e.json');
    expect(caseToPlan(ok).stages.map((s) => s.kind)).toContain('filterExpr');
    const bad = parseCase(JSON.stringify({ name: 'e', query: { ...q, pipeline: [{ filter: 'nope > 1' }] }, steps: [] }), 'e.json');
    expect(() => caseToPlan(bad)).toThrow(/UNRESOLVED_COLUMN/);
    expect(() => parseCase(JSON.stringify({ name: 'e', query: { ...q, pipeline: [{ filter: 1 }] }, steps: [] }), 'e.json')).toThrow(
      /filter must be an expression/,
    );
    expect(() =>
      parseCase(JSON.stringify({ name: 'e', query: { ...q, pipeline: [{ withColumn: { name: 'b', expr: 'id', x: 1 } }] }, steps: [] }), 'e.json'),
    ).toThrow(/key "x"/);
  });

  it('deadLetters and deadLetterErrors are compared: an error class begins the reason in brackets, other text is contained', () => {
    const c = parseCase(caseWith([], { deadLetters: 2, deadLetterErrors: ['DIVIDE_BY_ZERO', 'not gzip'] }), 'f3.json');
    const step = { rows: [], watermark: '1970-01-01T00:00:00.000Z', stateRows: 0, droppedByWatermark: 0, batches: [] };
    const ok = { ...step, deadLetters: 2, deadLetterReasons: ['[DIVIDE_BY_ZERO] Division by zero', 'the key ends in .gz but the object is NOT GZIP data'] };
    expect(compareCase(c, { name: 'f3', steps: [ok] })).toEqual([]);
    const wrongClass = { ...ok, deadLetterReasons: ['DIVIDE_BY_ZERO without brackets', ok.deadLetterReasons[1]] };
    expect(compareCase(c, { name: 'f3', steps: [wrongClass] })).toEqual([expect.stringMatching(/^step 1: deadLetterErrors: expected/)]);
    expect(compareCase(c, { name: 'f3', steps: [{ ...ok, deadLetters: 1 }] })).toEqual([expect.stringMatching(/^step 1: deadLetters: expected 2, got 1/)]);
    expect(compareCase(c, { name: 'f3', steps: [step] })).toEqual([expect.stringMatching(/does not read the dead letters back/)]);
  });
});

describe('when a step\'s rows are compared (FORMAT-3 "Types", output column)', () => {
  const c = parseCase(
    JSON.stringify({
      name: 'values',
      query: { schema: 'k STRING', groupBy: ['k'], aggregations: [{ fn: 'count', as: 'n' }], outputMode: 'update' },
      steps: [{ add: [], expect: { rows: [] } }],
    }),
    'v.json',
  );
  const differences = (expected: unknown, actual: unknown) => {
    const withRow = { ...c, steps: [{ add: [], expect: { rows: [{ v: expected }] } }] };
    const step = { rows: [{ v: actual }], watermark: '1970-01-01T00:00:00.000Z', stateRows: 0, droppedByWatermark: 0, batches: [] };
    return compareCase(withRow, { name: 'values', steps: [step as never] }).length;
  };

  it('compares decimals as their exact text: the scale is part of the value', () => {
    expect(differences('0.30', '0.30')).toBe(0);
    expect(differences('0.30', '0.3')).toBe(1);
    expect(differences('0.30', 0.3)).toBe(1);
    expect(differences('12345678901234567890123456789012345678', '12345678901234567890123456789012345679')).toBe(1);
  });

  it('compares dates as their text', () => {
    expect(differences('2026-10-01', '2026-10-01')).toBe(0);
    expect(differences('2026-10-01', '2026-10-02')).toBe(1);
  });

  it('compares integers exactly, doubles to 1e-9 relative', () => {
    expect(differences(9007199254740991, 9007199254740990)).toBe(1);
    expect(differences(0.3, 0.1 + 0.2)).toBe(0);
    expect(differences(0.3, 0.31)).toBe(1);
  });

  it('compares nested values element by element, by their own rules', () => {
    expect(differences([{ p: '1.50', d: '2026-10-01' }, null], [{ p: '1.50', d: '2026-10-01' }, null])).toBe(0);
    expect(differences([{ p: '1.50' }], [{ p: '1.5' }])).toBe(1);
    expect(differences([1, 2], [2, 1])).toBe(1);
    expect(differences({ a: [1] }, { a: [1, null] })).toBe(1);
  });
});

describe('when a case of files in another format than JSON is sent to a Kinesis stream', () => {
  it('is refused before any stream is made, naming the format and the source it needs', async () => {
    const c = parse({ ...base, query: { ...base.query, format: 'csv' } });
    // (no emulator: the refusal comes before the first request)
    const sourceFor = kinesisCaseSource({ region: 'us-east-1' });
    await expect(sourceFor(caseToPlan(c), 'csv-case')).rejects.toThrow(/read as csv files needs the S3 landing source: Kinesis records are JSON/);
  });
});

describe("the project's cases", () => {
  // The crash matrix (test/integration/exactly-once-sinks.test.ts) crashes each case mid-sink and
  // needs each to write output: a case whose runs emit no row never reaches that point.
  it('each case that runs (no expectError, a step that does not fail) expects at least one output row', () => {
    const dir = join(__dirname, '../conformance/cases');
    const silent = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .filter((f) => {
        const c = parse(JSON.parse(readFileSync(join(dir, f), 'utf8')));
        if (c.expectError !== undefined || !c.steps.some((st) => !('error' in st.expect))) return false;
        const rows = (v: unknown) => (Array.isArray(v) ? v.length : 0);
        const batches = (v: unknown) => (Array.isArray(v) ? (v as Array<{ rows?: unknown }>) : []);
        return !c.steps.some((st) => rows(st.expect.rows) > 0 || batches(st.expect.batches).some((b) => rows(b.rows) > 0));
      });
    expect(silent).toEqual([]);
  });
});
