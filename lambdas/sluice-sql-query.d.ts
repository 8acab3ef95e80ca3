/** The text of the .sql file of a pipeline's query: esbuild's text loader puts it in the bundle (lib/infra/sql-entry.ts). */
declare module 'sluice-sql-query' {
  const sql: string;
  export default sql;
}
