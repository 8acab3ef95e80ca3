/**
 * A transformWithState query (sluice's docs/transform-with-state.md): each user's session of
 * events, closed and written once 30 minutes of processing time pass without a new event. Runs
 * beside the windowed totals: `npx sluice run src/sessions.ts --input sample` (a checkpoint of its
 * own, under its own query name).
 *
 * The processor keeps, per user, the session's first event time, its event count and its total in
 * one value state, and one processing-time timer 30 minutes after the last event; a scheduled run
 * without new events runs a batch only when a session's timer is due.
 */
import { readStream, StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from 'sluice';
import { SCHEMA } from './query';

type Event = { user: string; event_time: number; amount: number };
type Session = { start: number; events: number; total: number };
type SessionRow = { user: string; start: number; events: number; total: number };

const GAP_MS = 30 * 60_000;

export class UserSessions extends StatefulProcessor<{ user: string }, Event, SessionRow> {
  private session!: ValueState<Session>;

  init(handle: StatefulProcessorHandle): void {
    this.session = handle.getValueState<Session>('session');
  }

  handleInputRows(_key: { user: string }, rows: IterableIterator<Event>, timerValues: TimerValues): SessionRow[] {
    const s = this.session.get() ?? { start: Number.POSITIVE_INFINITY, events: 0, total: 0 };
    for (const e of rows) {
      s.start = Math.min(s.start, e.event_time);
      s.events++;
      s.total += e.amount ?? 0;
    }
    this.session.update(s);
    const handle = this.getHandle();
    for (const t of handle.listTimers()) handle.deleteTimer(t);
    handle.registerTimer(timerValues.getCurrentProcessingTimeInMs() + GAP_MS);
    return [];
  }

  handleExpiredTimer(key: { user: string }): SessionRow[] {
    const s = this.session.get();
    this.session.clear();
    return s ? [{ user: key.user, start: s.start, events: s.events, total: s.total }] : [];
  }
}

export function userSessions() {
  return readStream
    .format('{{FORMAT}}')
    .schema(SCHEMA){{FORMAT_OPTIONS}}
    .{{READ}}
    .groupBy('user')
    .transformWithState(new UserSessions(), { timeMode: 'processingTime', outputSchema: 'user STRING, start TIMESTAMP, events INT, total DOUBLE' })
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('{{NAME}}-sessions')
    .plan();
}

export default userSessions;
