/**
 * The ports: the only way the engine talks to the world. Everything here is plain data and
 * promises; `lib/aws` implements them on S3/DynamoDB/Kinesis, `lib/engine/testing/memory-*.ts` in memory.
 *
 * One file per port, with the values it carries (values.ts: those several ports share); this
 * index re-exports them (types, and systemClock), so `import ... from './ports'` reads them all.
 */
export type { Json, OutputRow, Row } from './values';
export type { BatchLimits, DeadLetter, InputFile, ReadOptions, ReadResult, Source, SourceLocation } from './source';
export type { CheckpointHead, CheckpointStore, CommitEntry, OffsetEntry, QueryMetadata } from './checkpoint-store';
export type { OperatorStateSpec, StateChange, StateEntry, StateKey, StateStore } from './state-store';
export type { ShuffleStore } from './shuffle-store';
export type { OutputColumnType, RefusedRow, Sink, SinkContext } from './sink';
export type { DeadLetterKind, DeadLetterSink } from './dead-letter-sink';
export type { Lease, LeaseHandle } from './lease';
export type { Clock } from './clock';
export { systemClock } from './clock';
export type { StaticTableReader, StaticTables } from './static-tables';
