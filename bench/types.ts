/**
 * [11] types (issue 29): the engine on the same events written two ways, side by side in one
 * process, rounds interleaved: flat JSON with a DOUBLE amount (the bench's usual shape), and nested
 * JSON with a DECIMAL(10,2) amount, a customer STRUCT and an ARRAY of line STRUCTs, as order events
 * arrive. Both run the bench's query (10-minute windows by user, sum of the amount, count), so the
 * difference is what reading and summing exact, nested values costs.
 */
import { runEngine } from './engine-run';
import { BENCH_SCHEMA, generateEvents } from './generate';
import { benchPlan } from './query';

export const NESTED_SCHEMA =
  'user STRING, event_time TIMESTAMP, amount DECIMAL(10,2), customer STRUCT<id: BIGINT, country: STRING, device: STRING>, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>, session_id STRING';

/** The flat events rewritten as nested orders: same user, time and amount (12.34 stays 12.34, now a DECIMAL). */
function nested(body: string): string {
  return body
    .split('\n')
    .map((line, i) => {
      const e = JSON.parse(line) as { user: string; event_time: string; amount: number; country: string; device: string; session_id: string };
      const amount = e.amount.toFixed(2);
      return `{"user":"${e.user}","event_time":"${e.event_time}","amount":${amount},"customer":{"id":${100000 + (i % 5000)},"country":"${e.country}","device":"${e.device}"},"lines":[{"sku":"sku-${i % 97}","qty":1,"price":${amount}}],"session_id":"${e.session_id}"}`;
    })
    .join('\n');
}

export interface TypesFigures {
  readonly events: number;
  readonly flatEventsPerSecond: number;
  readonly nestedDecimalEventsPerSecond: number;
  readonly nestedOverFlat: number;
  readonly flatBytesPerEvent: number;
  readonly nestedBytesPerEvent: number;
}

export async function runTypesSection(opts: {
  events: number;
  files: number;
  keys: number;
  rounds: number;
  out: (line?: string) => void;
}): Promise<TypesFigures> {
  const flat = generateEvents({ events: opts.events, keys: opts.keys, files: opts.files, spanMinutes: 180 });
  const orders = flat.files.map((f) => ({ key: f.key, body: nested(f.body) }));
  const maxFiles = Math.max(1, Math.floor(opts.files / 4));
  const runs: Record<'flat' | 'nested', number[]> = { flat: [], nested: [] };
  opts.out(`  flat:   "${BENCH_SCHEMA}"`);
  opts.out(`  nested: "${NESTED_SCHEMA}"`);
  for (let r = 0; r < opts.rounds; r++) {
    for (const kind of ['flat', 'nested'] as const) {
      const files = kind === 'flat' ? flat.files : orders;
      const p = benchPlan(maxFiles, `bench-types-${kind}`, kind === 'flat' ? BENCH_SCHEMA : NESTED_SCHEMA);
      const run = await runEngine(files, { maxFilesPerTrigger: maxFiles, plan: p });
      runs[kind].push(run.seconds);
    }
  }
  const best = (xs: number[]) => Math.min(...xs);
  const flatRate = opts.events / best(runs.flat);
  const nestedRate = opts.events / best(runs.nested);
  const bytes = (fs: ReadonlyArray<{ body: string }>) => fs.reduce((n, f) => n + f.body.length, 0) / opts.events;
  const figures: TypesFigures = {
    events: opts.events,
    flatEventsPerSecond: Math.round(flatRate),
    nestedDecimalEventsPerSecond: Math.round(nestedRate),
    nestedOverFlat: Number((nestedRate / flatRate).toFixed(2)),
    flatBytesPerEvent: Math.round(bytes(flat.files)),
    nestedBytesPerEvent: Math.round(bytes(orders)),
  };
  opts.out(`  flat JSON, DOUBLE amount:          ${figures.flatEventsPerSecond.toLocaleString('en-US')} events/s (${figures.flatBytesPerEvent} bytes/event)`);
  opts.out(
    `  nested JSON, DECIMAL(10,2) amount: ${figures.nestedDecimalEventsPerSecond.toLocaleString('en-US')} events/s (${figures.nestedBytesPerEvent} bytes/event)`,
  );
  opts.out(`  nested over flat: ${figures.nestedOverFlat}× (best of ${opts.rounds} interleaved rounds each)`);
  return figures;
}
