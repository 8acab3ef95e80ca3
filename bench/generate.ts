/**
 * Deterministic benchmark input: JSON-lines events of about 200 bytes over a number of user keys,
 * in roughly event-time order (as a landing prefix receives them), split into files.
 *
 * `referrer` is not in BENCH_SCHEMA on purpose: producers send fields a query does not declare,
 * and the parser must skip them (it also brings the lines to about 200 bytes).
 */
export interface GeneratedInput {
  readonly files: Array<{ key: string; body: string }>;
  readonly events: number;
  readonly bytes: number;
}

export const BENCH_SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE, country STRING, device STRING, session_id STRING, page STRING';

export function generateEvents(opts: { events: number; keys: number; files: number; spanMinutes: number; seed?: number }): GeneratedInput {
  let s = opts.seed ?? 42;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const start = Date.UTC(2026, 9, 1, 12, 0, 0);
  const perFile = Math.ceil(opts.events / opts.files);
  const countries = ['DE', 'FR', 'US', 'GB', 'JP', 'BR', 'IN', 'NL'];
  const devices = ['ios', 'android', 'web', 'tv'];
  const files: Array<{ key: string; body: string }> = [];
  let bytes = 0;
  let made = 0;
  for (let f = 0; f < opts.files && made < opts.events; f++) {
    const lines: string[] = [];
    for (let i = 0; i < perFile && made < opts.events; i++, made++) {
      // event time advances with the event index, with up to two minutes of jitter (lateness)
      const t = start + Math.floor((made / opts.events) * opts.spanMinutes * 60_000) - Math.floor(rand() * 120_000);
      const iso = new Date(t).toISOString();
      const ts = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
      const user = `user-${String(Math.floor(rand() * opts.keys)).padStart(6, '0')}`;
      const line = `{"user":"${user}","event_time":"${ts}","amount":${(rand() * 100).toFixed(2)},"country":"${countries[Math.floor(rand() * 8)]}","device":"${devices[Math.floor(rand() * 4)]}","session_id":"s-${Math.floor(rand() * 1e9).toString(36)}","page":"/products/${Math.floor(rand() * 5000)}","referrer":"https://www.example.com/c/${Math.floor(rand() * 1e6)}"}`;
      lines.push(line);
    }
    const body = lines.join('\n');
    bytes += body.length;
    files.push({ key: `events/part-${String(f).padStart(5, '0')}.json`, body });
  }
  return { files, events: made, bytes };
}
