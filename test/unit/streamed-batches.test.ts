/**
 * A stateless batch streams: each source chunk goes through the stages to the sink before the
 * source is asked for the next (Sink.addBatchChunks), so a batch far larger than a chunk is never
 * held whole. The exactly-once rules stay: a crash at any point, mid-sink after the first piece
 * included, replays to the rows of a run without failure, and a replay whose chunks differ from
 * what the first attempt wrote fails loudly.
 */
import { InjectedCrash, SluiceError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { CHUNK_LINES } from '../../lib/engine/lines';
import type { Json, OutputRow, ReadOptions, ReadResult, Sink, Source } from '../../lib/engine/ports';
import { count } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { CRASH_POINTS, crashingAt } from '../../lib/engine/testing/crash';
import { createTestRunner, type Event } from './engine-factories';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';

const schema = 'id LONG, v DOUBLE';
/** Stateless: keep even ids, add a column. */
const evens = readStream
  .format('json')
  .schema(schema)
  .load()
  .filter((r) => Number(r.id) % 2 === 0)
  .withColumn('twice', 'DOUBLE', (r) => Number(r.v) * 2)
  .writeStream.outputMode('append')
  .trigger({ availableNow: true })
  .queryName('evens')
  .plan();

/** `n` events with ids from `from`: v = id / 10. */
const events = (n: number, from = 0): Event[] => Array.from({ length: n }, (_, i) => ({ id: from + i, v: (from + i) / 10 }));
/** What the query emits for them, computed from the input, in input order. */
const expectedOf = (input: Event[]) => input.filter((e) => Number(e.id) % 2 === 0).map((e) => ({ id: e.id, v: e.v, twice: Number(e.v) * 2 }));

/**
 * The landing source with a record of what the sink had received each time the source yielded a
 * chunk: `sinkChunksAtYield[k]` is how many chunks the sink held when the source yielded chunk k.
 */
function watchedSource(inner: InMemoryFileSource, sink: InMemorySink) {
  const sinkChunksAtYield: number[] = [];
  const source: Source = {
    description: inner.description,
    latestOffset: (start) => inner.latestOffset(start),
    planBatch: (id, start, target, limits) => inner.planBatch(id, start, target, limits),
    read: (id, start, end, options) => inner.read(id, start, end, options),
    async *readChunks(id: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
      for await (const chunk of inner.readChunks(id, start, end, options)) {
        if (chunk.rows.length === 0) continue;
        sinkChunksAtYield.push(sink.received.length);
        yield chunk;
      }
    },
  };
  return { source, sinkChunksAtYield };
}

describe('when a stateless batch is far larger than one chunk', () => {
  const total = 4 * CHUNK_LINES + 100; // 5 source chunks in one file

  it('hands the sink chunk k before the source yields chunk k + 1, one chunk at a time, in input order', async () => {
    const sink = new InMemorySink();
    const files = new InMemoryFileSource(evens.source.schema);
    const { source, sinkChunksAtYield } = watchedSource(files, sink);
    const t = createTestRunner(evens, { sink });
    const input = events(total);
    files.add('part-00001.json', input);
    const report = await new MicroBatchExecutor({ plan: evens, source, checkpoint: t.checkpoint, state: t.state, sink }).run();

    const chunks = Math.ceil(total / CHUNK_LINES);
    // When the source yields chunk k, the sink has received chunks 0..k-1 (and nothing later).
    expect(sinkChunksAtYield).toEqual(Array.from({ length: chunks }, (_, k) => k));
    expect(sink.received.map((c) => c.index)).toEqual(Array.from({ length: chunks }, (_, k) => k));
    // The largest array handed over is one chunk's output (half of a chunk's lines are even ids).
    expect(Math.max(...sink.received.map((c) => c.rows.length))).toBe(CHUNK_LINES / 2);
    expect(sink.received.flatMap((c) => c.rows)).toEqual(expectedOf(input));
    expect(t.sinkRows()).toEqual(expectedOf(input));
    expect(report.rowsOut).toBe(expectedOf(input).length);
    expect(report.batches[0].rows).toEqual([]); // nothing kept unless collectRows
    expect(sink.writes.map((w) => w.rows.length).reduce((a, b) => a + b, 0)).toBe(expectedOf(input).length);
  });

  it('keeps the output in the report only with collectRows, and counts it either way', async () => {
    const t = createTestRunner(evens);
    const input = events(total);
    t.drop(input);
    const report = await t.run(); // collectRows: true
    expect(report.batches[0].rows).toEqual(expectedOf(input));
    expect(report.batches[0].numOutputRows).toBe(expectedOf(input).length);
    expect(t.checkpoint.progress.get(0)).toMatchObject({ numInputRows: total, sink: { numOutputRows: expectedOf(input).length } });
  });

  it("still writes the batch's dead letters, after the sink", async () => {
    const t = createTestRunner(evens);
    t.drop(
      `${events(CHUNK_LINES + 1)
        .map((e) => JSON.stringify(e))
        .join('\n')}\nnot json\n`,
    );
    await t.run();
    expect(t.deadLetters.all('malformed')).toEqual([expect.objectContaining({ raw: 'not json', source: { file: 'part-00001.json', line: CHUNK_LINES + 2 } })]);
    expect(t.sinkRows()).toEqual(expectedOf(events(CHUNK_LINES + 1)));
  });
});

describe('when the sink has no addBatchChunks', () => {
  it('gets the whole batch in one addBatch, as before', async () => {
    const batches: OutputRow[][] = [];
    const whole: Sink = { description: 'whole', addBatch: async (_id, rows) => void batches.push(rows) };
    const t = createTestRunner(evens);
    const input = events(3 * CHUNK_LINES);
    t.drop(input);
    await new MicroBatchExecutor({ plan: evens, source: t.source, checkpoint: t.checkpoint, state: t.state, sink: whole }).run();
    expect(batches).toEqual([expectedOf(input)]);
  });
});

describe('when the query is stateful', () => {
  it('never streams: the sink gets the aggregated batch whole', async () => {
    const counts = readStream
      .format('json')
      .schema(schema)
      .load()
      .groupBy('id')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('counts')
      .plan();
    const t = createTestRunner(counts);
    t.drop(events(2 * CHUNK_LINES));
    await t.run();
    expect(t.sink.received).toEqual([]);
    expect(t.sink.calls).toBe(1);
    expect(t.sinkRows()).toHaveLength(2 * CHUNK_LINES);
  });
});

describe('when a streamed run crashes', () => {
  const input = [events(2 * CHUNK_LINES + 7), events(CHUNK_LINES + 3, 5000)];

  it.each(CRASH_POINTS)('at %s, the replay leaves the rows of a run without failure, each piece written with one content', async (point) => {
    const t = createTestRunner(evens, { sink: new InMemorySink({ pieceRows: 100 }) });
    for (const rows of input) t.drop(rows);
    await t.crashRun({ point, batchId: 0 });
    await t.run();
    expect(t.sinkRows()).toEqual(expectedOf(input.flat()));
    expect(t.sink.conflicts()).toEqual([]);
    expect([...t.checkpoint.commits.keys()]).toEqual([0]);
  });

  it('at mid-sink, stops after the first piece, before the source yielded its last chunk; the replay writes the rest', async () => {
    const sink = new InMemorySink({ pieceRows: 100 });
    const files = new InMemoryFileSource(evens.source.schema);
    const { source, sinkChunksAtYield } = watchedSource(files, sink);
    const t = createTestRunner(evens, { sink });
    files.add('part-00001.json', events(3 * CHUNK_LINES));
    const deps = { plan: evens, source, checkpoint: t.checkpoint, state: t.state, sink };
    await expect(new MicroBatchExecutor(crashingAt({ point: 'mid-sink', batchId: 0 }, deps)).run()).rejects.toThrow(InjectedCrash);
    // Piece 0 (100 rows) filled up inside chunk 0 (256 even ids): the source had yielded one chunk of three.
    expect(sinkChunksAtYield).toEqual([0]);
    expect(sink.writes.map((w) => w.piece)).toEqual([0]);
    await new MicroBatchExecutor(deps).run();
    const pieces = Math.ceil((3 * CHUNK_LINES) / 2 / 100);
    expect(sink.writes.map((w) => w.piece)).toEqual([0, ...Array.from({ length: pieces }, (_, i) => i)]);
    expect(t.sinkRows()).toEqual(expectedOf(events(3 * CHUNK_LINES)));
  });

  it('fails loudly when the replay yields other rows than the first attempt wrote (a source that changed under its offsets)', async () => {
    const t = createTestRunner(evens, { sink: new InMemorySink({ pieceRows: 100 }) });
    t.drop(events(CHUNK_LINES));
    expect(await t.crashRun({ point: 'mid-sink', batchId: 0 })).toBe(true);
    t.source.files[0].body = events(CHUNK_LINES, 1)
      .map((e) => JSON.stringify(e))
      .join('\n');
    const err = await t.run().catch((e) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.retriable).toBe(false);
    expect(err.message).toMatch(/piece 0 holds other rows than this replay's of batch 0/);
    expect([...t.checkpoint.commits.keys()]).toEqual([]);
  });
});

describe('when a sink returns before it took every chunk', () => {
  it('fails the batch instead of committing rows the sink never saw', async () => {
    const t = createTestRunner(evens);
    t.drop(events(3 * CHUNK_LINES));
    const firstOnly: Sink = {
      description: 'first-only',
      addBatch: async () => undefined,
      async addBatchChunks(_id, chunks) {
        for await (const _chunk of chunks) break;
      },
    };
    const run = new MicroBatchExecutor({ plan: evens, source: t.source, checkpoint: t.checkpoint, state: t.state, sink: firstOnly }).run();
    await expect(run).rejects.toThrow(/sink first-only returned from addBatchChunks of batch 0 before it took every chunk/);
    expect([...t.checkpoint.commits.keys()]).toEqual([]);
  });
});
