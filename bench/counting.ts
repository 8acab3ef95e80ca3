/**
 * Instruments for the benchmark: a sink that keeps only counts, an AWS request counter (SDK
 * middleware: sees every HTTP attempt of a client, the lease's included) and peak-RSS readings.
 * (The state store wrapper that records each commit is lib/engine/testing/counting-state-store.ts's CountingStateStore.)
 */
import { readFileSync } from 'node:fs';
import type { Json, OutputRow, Sink } from '../lib/engine/ports';

/** A sink that keeps nothing but counts (the output of a real sink leaves the process). */
export class CountingSink implements Sink {
  readonly description = 'count://sink';
  rows = 0;
  batches = 0;
  async addBatch(_batchId: number, rows: OutputRow[]) {
    this.batches++;
    this.rows += rows.length;
  }
}

interface MiddlewareClient {
  middlewareStack: { add(mw: unknown, opts: Record<string, unknown>): void };
}

/** Counts every request (each attempt) the attached SDK clients send, by service and command. */
export class RequestCounter {
  private readonly counts = new Map<string, number>();
  private readonly inFlight = new Map<string, { n: number; since: number; busyMs: number }>();

  /** Wall time during which at least one request of `service` was in flight, ms. */
  busyMs(service: string): number {
    const f = this.inFlight.get(service);
    if (!f) return 0;
    return f.busyMs + (f.n > 0 ? performance.now() - f.since : 0);
  }

  attach(client: MiddlewareClient, service: string): void {
    const counts = this.counts;
    if (!this.inFlight.has(service)) this.inFlight.set(service, { n: 0, since: 0, busyMs: 0 });
    const flight = this.inFlight.get(service)!;
    const mw = (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      const k = `${service}:${context.commandName ?? '?'}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
      if (flight.n++ === 0) flight.since = performance.now();
      try {
        return await next(args);
      } finally {
        if (--flight.n === 0) flight.busyMs += performance.now() - flight.since;
      }
    };
    // finalizeRequest, low priority: inside the SDK's retry middleware, so retries count too.
    client.middlewareStack.add(mw, { step: 'finalizeRequest', priority: 'low', name: `benchRequestCounter-${service}` });
  }

  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }

  total(service?: string, from?: Map<string, number>): number {
    let n = 0;
    for (const [k, v] of this.counts) if (!service || k.startsWith(`${service}:`)) n += v - (from?.get(k) ?? 0);
    return n;
  }
}

/** Requests between two snapshots, by "service:Command". */
export function diffCounts(a: Map<string, number>, b: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d) out[k] = d;
  }
  return out;
}

export function sumService(counts: Record<string, number>, service: string): number {
  let n = 0;
  for (const [k, v] of Object.entries(counts)) if (k.startsWith(`${service}:`)) n += v;
  return n;
}

/** Compact "Cmd×n" list of one service's counts, commands without the service prefix. */
export function describeCounts(counts: Record<string, number>, service: string): string {
  return Object.entries(counts)
    .filter(([k]) => k.startsWith(`${service}:`))
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k.slice(service.length + 1).replace(/Command$/, '')} ${v}`)
    .join(', ');
}

/** The kernel's high-water mark of this process's resident set (VmHWM), bytes; null off Linux. */
export function peakRssBytes(): number | null {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Samples rss and heapUsed on a timer (and on demand); keeps the maxima. */
export class MemorySampler {
  maxRss = 0;
  maxHeapUsed = 0;
  private timer: NodeJS.Timeout | null = null;
  start(everyMs = 20): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
    return this;
  }
  sample(): void {
    const m = process.memoryUsage();
    if (m.rss > this.maxRss) this.maxRss = m.rss;
    if (m.heapUsed > this.maxHeapUsed) this.maxHeapUsed = m.heapUsed;
  }
  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

export const MB = (bytes: number | null | undefined) => (bytes == null ? 'n/a' : `${(bytes / 2 ** 20).toFixed(0)} MB`);
export type { Json };
