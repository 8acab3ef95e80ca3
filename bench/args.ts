/**
 * The bench scripts' command line (`--name value`), and the engine section's input as bench/run.ts
 * measures it, shared with bench/ab-engine.ts so an A/B run measures the same thing.
 */

/** The value after `--name`, or undefined. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** `--name` as a number, or the fallback. */
export const num = (name: string, fallback: number) => (arg(name) === undefined ? fallback : Number(arg(name)));

/** The engine section: 1M events (--events), 10,000 keys, 100 files over an hour, maxFilesPerTrigger 10 (10 batches). */
export const ENGINE_INPUT = {
  events: num('events', 1_000_000),
  keys: 10_000,
  files: 100,
  maxFiles: 10,
  spanMinutes: 60,
  rounds: num('rounds', 7),
} as const;
