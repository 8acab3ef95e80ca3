import type { Json } from './values';

/**
 * What a dead letter is: a record that could not be parsed (`malformed`), a row that came too late
 * for the watermark (`late`, the late-rows side output), or an output row the sink refused
 * (`unwritable`: Sink.check, e.g. an S3 key over 1,024 bytes, a DynamoDB item over 400 KB).
 */
export type DeadLetterKind = 'malformed' | 'late' | 'unwritable';

/** Where dead letters and late rows go. Deterministic per batch so a replay overwrites. */
export interface DeadLetterSink {
  readonly description: string;
  write(batchId: number, kind: DeadLetterKind, records: Json[]): Promise<void>;
}
