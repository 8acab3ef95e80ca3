/** The DeadLetterSink twin (the twins' common rules: twins.ts). */
import type { DeadLetterSink, Json } from '../ports';

export class InMemoryDeadLetters implements DeadLetterSink {
  readonly description = 'memory://dead-letters';
  readonly records = new Map<string, Json[]>();
  async write(batchId: number, kind: string, records: Json[]) {
    this.records.set(`${kind}/${batchId}`, records);
  }
  all(kind: string): Json[] {
    return [...this.records.entries()].filter(([k]) => k.startsWith(`${kind}/`)).flatMap(([, v]) => v);
  }
}
