/**
 * Spark's default resolver (spark.sql.caseSensitive false): `name` names the item spelled exactly
 * so, else the first whose name equals it in another case. The one rule for columns, struct
 * fields, partition folders, Parquet schema children and option names.
 */
export function resolveName<T extends { readonly name: string }>(items: readonly T[], name: string): T | undefined;
export function resolveName<T>(items: readonly T[], name: string, nameOf: (item: T) => string): T | undefined;
export function resolveName<T>(items: readonly T[], name: string, nameOf: (item: T) => string = (item) => (item as { name: string }).name): T | undefined {
  const exact = items.find((item) => nameOf(item) === name);
  if (exact !== undefined) return exact;
  const lower = name.toLowerCase();
  return items.find((item) => nameOf(item).toLowerCase() === lower);
}
