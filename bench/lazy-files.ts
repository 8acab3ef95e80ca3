/**
 * Landing files whose bodies are generated when read, not held: for the memory check, where the
 * backlog must live "in S3", outside the process, as it does for a deployed pipeline. Same line
 * format as bench/generate.ts (built more cheaply: a 10x backlog is 10M lines, and the fields after
 * event_time come from a fixed pool of 4096); each file covers the next `minutesPerFile` of event time, so 10x the files is 10x the
 * hours.
 */
export interface LazyFile {
  readonly key: string;
  readonly body: string;
}

const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'JP', 'BR', 'IN', 'NL'];
const DEVICES = ['ios', 'android', 'web', 'tv'];
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const DAY_MS = 86_400_000;
let users: string[] = [];
/** Reused between files: the body is copied out of it as a string. */
let scratch = Buffer.alloc(0);

/** The fields after event_time, drawn from a fixed pool: formatting them per line costs more than the engine run. */
const TAILS = 4096;
const tails: string[] = (() => {
  let s = 7;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  return Array.from({ length: TAILS }, () => {
    const cents = Math.floor(rand() * 10_000);
    return `"amount":${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')},"country":"${COUNTRIES[Math.floor(rand() * 8)]}","device":"${DEVICES[Math.floor(rand() * 4)]}","session_id":"s-${Math.floor(rand() * 1e9).toString(36)}","page":"/products/${Math.floor(rand() * 5000)}","referrer":"https://www.example.com/c/${Math.floor(rand() * 1e6)}"}`;
  });
})();

function dayPrefix(dayStartMs: number): string {
  return `${new Date(dayStartMs).toISOString().slice(0, 10)} `;
}

export function fileBody(index: number, opts: { eventsPerFile: number; keys: number; minutesPerFile: number; seed?: number }): string {
  if (users.length !== opts.keys) users = Array.from({ length: opts.keys }, (_, i) => `user-${String(i).padStart(6, '0')}`);
  let s = ((opts.seed ?? 42) + Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const start = Date.UTC(2026, 9, 1, 12, 0, 0) + index * opts.minutesPerFile * 60_000;
  let day = -1;
  let prefix = '';
  if (scratch.length < opts.eventsPerFile * 256) scratch = Buffer.allocUnsafe(opts.eventsPerFile * 256);
  const buf = scratch;
  let pos = 0;
  for (let i = 0; i < opts.eventsPerFile; i++) {
    const t = start + Math.floor((i / opts.eventsPerFile) * opts.minutesPerFile * 60_000) - Math.floor(rand() * 120_000);
    const d = Math.floor(t / DAY_MS);
    if (d !== day) {
      day = d;
      prefix = dayPrefix(d * DAY_MS);
    }
    let ms = t - d * DAY_MS;
    const h = Math.floor(ms / 3_600_000);
    ms -= h * 3_600_000;
    const m = Math.floor(ms / 60_000);
    ms -= m * 60_000;
    const sec = Math.floor(ms / 1000);
    ms -= sec * 1000;
    if (i > 0) buf[pos++] = 10;
    pos += buf.write('{"user":"', pos, 'latin1');
    pos += buf.write(users[Math.floor(rand() * opts.keys)], pos, 'latin1');
    pos += buf.write('","event_time":"', pos, 'latin1');
    pos += buf.write(prefix, pos, 'latin1');
    pos += buf.write(TWO[h], pos, 'latin1');
    buf[pos++] = 58;
    pos += buf.write(TWO[m], pos, 'latin1');
    buf[pos++] = 58;
    pos += buf.write(TWO[sec], pos, 'latin1');
    buf[pos++] = 46;
    pos += buf.write(THREE[ms], pos, 'latin1');
    pos += buf.write('",', pos, 'latin1');
    pos += buf.write(tails[Math.floor(rand() * TAILS)], pos, 'latin1');
  }
  return buf.toString('latin1', 0, pos);
}

/** `files` landing files in key order; a body is built when read (only the last one is kept). */
export function lazyFiles(opts: { files: number; eventsPerFile: number; keys: number; minutesPerFile: number; seed?: number }): LazyFile[] {
  const out: LazyFile[] = [];
  // The source reads `.body` more than once per file: remember the last one only.
  let last = -1;
  let lastBody = '';
  for (let i = 0; i < opts.files; i++) {
    const key = `events/part-${String(i).padStart(6, '0')}.json`;
    out.push({
      key,
      get body() {
        if (last !== i) {
          lastBody = fileBody(i, opts);
          last = i;
        }
        return lastBody;
      },
    });
  }
  return out;
}
