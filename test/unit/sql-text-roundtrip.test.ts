/**
 * astText writes an expression's tree as text the parser reads back into the same tree: the text
 * a filter moves as (projection-pushdown.ts, join-condition.ts). Every expression of the
 * conformance cases (the project's, and ../shared's when it is beside the clone) and a list of
 * hard ones go through parse, print, parse.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseExpression, parseNamedExpression } from '../../lib/engine/expr/parser';
import { astText, sameAst } from '../../lib/engine/query/sql-text';
import { caseFiles, PROJECT_CASES } from '../helpers/supported-cases';

const HARD = [
  String.raw`regexp_extract(s, '(\\d+)-(x)', 1)`,
  String.raw`s RLIKE '^a\\.b$' AND s NOT RLIKE 'x'`,
  String.raw`concat(s, 'it''s', "dq\"x", '\\n', '\n', 'tab\there')`,
  "s LIKE 'a!_%' ESCAPE '!' OR s NOT ILIKE 'B%'",
  'd * 1.5BD + 1e3 - 2L * -3 - (-x) + +y',
  "t + INTERVAL '1' HOUR > TIMESTAMP '2026-01-01 00:00:00.123456' OR DATE '2026-02-01' < d",
  'CAST(s AS DECIMAL(5,1)) + TRY_CAST(s AS INT) + n::BIGINT',
  'CAST(m AS MAP<STRING, ARRAY<STRUCT<a: INT, `b c`: STRING>>>) IS NOT NULL',
  "CASE WHEN n > 1 THEN 'x' WHEN n IS NULL THEN NULL ELSE 'y' END = CASE n WHEN 1 THEN 'a' END",
  'n BETWEEN 1 AND 3 AND n NOT BETWEEN -1 AND 0 AND n IN (1, 2, 3) AND n NOT IN (4)',
  "a[0].b['k'] = named_struct('x', 1).x AND `odd name`.`inner` IS TRUE AND v IS NOT FALSE",
  'count(DISTINCT s) + count(*) > 0 OR a IS DISTINCT FROM b OR a IS NOT DISTINCT FROM b',
  "EXTRACT(YEAR FROM t) = 2026 AND TRIM(BOTH 'x' FROM s) = TRIM(s) AND trim(LEADING FROM s) <> ''",
  'NOT (a = b) AND ~n = 0 AND n DIV 2 = n % 2 AND s || s = s AND a <=> b AND a == b AND a != b',
];

/** Every expression text of a case: selectExpr items, filters, withColumn and groupBy/aggregation expressions. */
function caseExpressions(file: string): string[] {
  const out: string[] = [];
  const visit = (v: unknown, key = ''): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x, key);
      if (key === 'selectExpr') for (const x of v) if (typeof x === 'string') out.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if ((k === 'filter' || k === 'expr' || k === 'condition') && typeof x === 'string') out.push(x);
        visit(x, k);
      }
    }
  };
  visit(JSON.parse(readFileSync(file, 'utf8')).query);
  return out;
}

const shared = join(__dirname, '../../../shared/conformance');
const corpus = [
  ...HARD,
  ...[PROJECT_CASES, ...['cases', 'cases-2', 'cases-3', 'cases-4'].map((d) => join(shared, d))].flatMap((dir) => caseFiles(dir).flatMap(caseExpressions)),
];

describe('astText', () => {
  it.each(corpus.map((t) => [t]))('prints %s as text that parses back to the same tree', (text) => {
    let ast: ReturnType<typeof parseExpression>;
    try {
      ast = parseNamedExpression(text).ast;
    } catch {
      return; // (a case's text the parser refuses on purpose: nothing to print)
    }
    const printed = astText(ast);
    expect(sameAst(parseExpression(printed), ast)).toBe(true);
  });

  it('escapes what the analyzer shows unescaped: a regex keeps its backslash', () => {
    const ast = parseExpression(String.raw`s RLIKE '\\d+'`);
    expect(astText(ast)).toBe(String.raw`(s RLIKE '\\d+')`);
  });

  it('tells two trees apart by value, not by position', () => {
    expect(sameAst(parseExpression("a = 'x'"), parseExpression("a  =  'x'"))).toBe(true);
    expect(sameAst(parseExpression(String.raw`a = '\\d'`), parseExpression(String.raw`a = '\d'`))).toBe(false);
    expect(sameAst(parseExpression('a = 1'), parseExpression('a = 1L'))).toBe(false);
  });
});
