/** The StaticTables twin (the twins' common rules: twins.ts). */
import { SluiceError } from '../errors';
import type { StaticTableReader, StaticTables } from '../ports';
import type { StaticTableSpec } from '../plan/types';
import { coerceRecord } from '../json-record';

/**
 * Static tables in memory, for stream-static joins in tests: rows put under an S3 URI (read whole)
 * or a DynamoDB table name (looked up by key, as the DynamoDB adapter is), typed by the spec's
 * schema when opened. Counts the loads and lookups, so a test can see a run read a table once.
 */
export class InMemoryStaticTables implements StaticTables {
  private readonly objects = new Map<string, Array<Record<string, unknown>>>();
  private readonly tables = new Map<string, Array<Record<string, unknown>>>();
  readonly counts = { loads: 0, lookups: 0, keysLookedUp: 0 };

  /** The rows of the table at `uri` (staticTable.s3) or named `dynamodb://name` (staticTable.dynamodb). */
  put(where: string, rows: Array<Record<string, unknown>>): this {
    if (where.startsWith('dynamodb://')) this.tables.set(where.slice('dynamodb://'.length), rows);
    else this.objects.set(where, rows);
    return this;
  }

  open(spec: StaticTableSpec): StaticTableReader {
    const typed = (rows: Array<Record<string, unknown>>, what: string) =>
      rows.map((r, i) => {
        const res = coerceRecord(spec.schema, { ...r });
        if (!res.ok) throw new SluiceError(`static table ${what} row ${i + 1}: ${res.reason}`);
        return res.row;
      });
    if (spec.kind === 'dynamodb') {
      return {
        description: `dynamodb://${spec.tableName}`,
        lookup: async (keys) => {
          this.counts.lookups++;
          this.counts.keysLookedUp += keys.length;
          const rows = typed(this.tables.get(spec.tableName) ?? [], spec.tableName);
          const wanted = new Set(keys.map((k) => JSON.stringify(k)));
          return rows.filter((r) => wanted.has(JSON.stringify(spec.key.map((k) => r[k]))));
        },
      };
    }
    if (spec.kind === 's3') {
      return {
        description: spec.uri,
        load: async () => {
          this.counts.loads++;
          const rows = this.objects.get(spec.uri);
          if (!rows) throw new SluiceError(`static table ${spec.uri} has no objects: put its rows first`);
          return typed(rows, spec.uri);
        },
      };
    }
    return { description: 'staticTable.rows', load: async () => [...spec.rows] };
  }
}
