/**
 * list-ttl-long.ts with a TTL of 15 s on the same list state "listState" (Spark's test restarts
 * the query with another TTLConfig; only adding or dropping a TTL is refused).
 * Input `key STRING, action STRING, value INT` grouped by `key`; output `key STRING, value INT`.
 */
import ListTtlLong from './list-ttl-long';

export default class ListTtlShort extends ListTtlLong {
  protected ttlMs = 15_000;
}
