/**
 * What QueryInfo says from batch to batch: every call emits the batch id, and whether the query
 * id and the run id equal the ones the key's previous call saw (kept in a value state as
 * fixed-length digests, so the state's size does not depend on how the ids are written; null on
 * the key's first call).
 * Input `key STRING` grouped by `key`; output `key STRING, batch LONG, sameQuery BOOLEAN, sameRun BOOLEAN`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { key: string };
type Out = { key: string; batch: number; sameQuery: boolean | null; sameRun: boolean | null };
type Ids = { q: string; r: string };

/** FNV-1a of the text, as 8 hex digits. */
function digest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

export default class QueryInfoEcho extends StatefulProcessor<Key, Key, Out> {
  private ids!: ValueState<Ids>;

  init(handle: StatefulProcessorHandle): void {
    this.ids = handle.getValueState<Ids>('ids');
  }

  handleInputRows(key: Key): Out[] {
    const info = this.getHandle().getQueryInfo();
    const now = { q: digest(info.getQueryId()), r: digest(info.getRunId()) };
    const prev = this.ids.get();
    this.ids.update(now);
    return [{ key: key.key, batch: info.getBatchId(), sameQuery: prev ? prev.q === now.q : null, sameRun: prev ? prev.r === now.r : null }];
  }
}
