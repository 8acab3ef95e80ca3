import type { Json } from './values';

/** Where dead letters and late rows go. Deterministic per batch so a replay overwrites. */
export interface DeadLetterSink {
  readonly description: string;
  write(batchId: number, kind: 'malformed' | 'late', records: Json[]): Promise<void>;
}
