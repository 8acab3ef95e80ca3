/**
 * The statement parser of SQL query modules (lib/engine/sql/statement.ts) and the refusals of the
 * compiler: what a statement parses into (settings, items as written, relations, joins), and each
 * error's class and position in the statement (0-based; the message gives line and column).
 */
import { compileSql, parseSql, SqlError } from '../../lib/engine/sql';

/** The SqlError `run` throws (fails when it throws none or another error). */
function errorOf(run: () => unknown): SqlError {
  try {
    run();
  } catch (e) {
    if (e instanceof SqlError) return e;
    throw e;
  }
  throw new Error('no error');
}

const SRC = "FROM STREAM read_files(format => 'json', schema => 'user STRING, event_time TIMESTAMP, amount DOUBLE')";

describe('parseSql', () => {
  it('reads the SET list, the select items as written, the relation and its watermark', () => {
    const sql = `SET outputMode = append;
SET queryName = windowed-totals;
SET maxFilesPerTrigger = 10;
SET header = true; /* a block comment */
SELECT window(event_time, '10 minutes') AS window, user, sum(amount)   total, count(*) AS events
FROM STREAM read_files('s3://bucket/landing/events', format => 'json',
                       schema => 'user STRING, event_time TIMESTAMP, amount DOUBLE')
  WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
WHERE amount > 0 -- positive only
GROUP BY window(event_time, '10 minutes'), user`;
    const q = parseSql(sql);
    expect(q.settings.map((s) => [s.key, s.value])).toEqual([
      ['outputMode', 'append'],
      ['queryName', 'windowed-totals'],
      ['maxFilesPerTrigger', 10],
      ['header', true],
    ]);
    expect(q.items.map((i) => [i.text, i.alias ?? null, i.full])).toEqual([
      ["window(event_time, '10 minutes')", 'window', "window(event_time, '10 minutes') AS window"],
      ['user', null, 'user'],
      ['sum(amount)', 'total', 'sum(amount)   total'],
      ['count(*)', 'events', 'count(*) AS events'],
    ]);
    expect(q.items[2].pos).toBe(sql.indexOf('sum(amount)'));
    expect(q.from).toMatchObject({
      stream: true,
      fn: 'read_files',
      args: [
        { value: 's3://bucket/landing/events' },
        { name: 'format', value: 'json' },
        { name: 'schema', value: 'user STRING, event_time TIMESTAMP, amount DOUBLE' },
      ],
      watermark: { column: 'event_time', delay: '10 minutes' },
    });
    // the comment after the WHERE expression is not part of its text
    expect(q.where).toMatchObject({ text: 'amount > 0', pos: sql.indexOf('amount > 0') });
    expect(q.groupBy?.map((g) => g.text)).toEqual(["window(event_time, '10 minutes')", 'user']);
  });

  it('reads a join: its type, the joined relation with its alias and watermark, and ON or USING', () => {
    const q = parseSql(`SELECT * FROM STREAM kinesis('a', schema => 'k STRING, t TIMESTAMP') AS a
LEFT OUTER JOIN STREAM read_files(schema => 'k2 STRING, t2 TIMESTAMP') WATERMARK t2 DELAY OF INTERVAL '5 minutes' AS b
  ON a.k = b.k2 AND a.t BETWEEN b.t2 - INTERVAL 5 MINUTES AND b.t2 + INTERVAL 10 MINUTES
JOIN dynamodb('users', key => 'k', schema => 'k STRING, name STRING') USING (k);`);
    expect(q.joins.map((j) => [j.type, j.relation.fn, j.relation.stream, j.relation.alias ?? null])).toEqual([
      ['LEFT OUTER', 'read_files', true, 'b'],
      ['INNER', 'dynamodb', false, null],
    ]);
    expect(q.joins[0].relation.watermark?.delay).toBe('5 minutes');
    expect(q.joins[0].on?.text).toBe('a.k = b.k2 AND a.t BETWEEN b.t2 - INTERVAL 5 MINUTES AND b.t2 + INTERVAL 10 MINUTES');
    expect(q.joins[1].using).toEqual(['k']);
  });

  // where the error is: the first (or, with `last`, the last) place `at` occurs in the statement; '' is its end
  it.each([
    ['SELEC user FROM STREAM x()', 'PARSE_SYNTAX_ERROR', 'SELEC'],
    ['SELECT user', 'PARSE_SYNTAX_ERROR', ''],
    ['SET outputMode append; SELECT 1', 'PARSE_SYNTAX_ERROR', ';'],
    ['SET outputMode = append SELECT 1', 'PARSE_SYNTAX_ERROR', ''],
    [`SELECT user ${SRC} WATERMARK event_time DELAY OF 10 MINUTES`, 'PARSE_SYNTAX_ERROR', '10 MINUTES'],
    ["SELECT user FROM STREAM read_files(schema => 'user STRING)", 'PARSE_SYNTAX_ERROR', "'user"],
    [`SELECT user ${SRC} WHERE amount >`, 'PARSE_SYNTAX_ERROR', ''],
    [`SELECT user ${SRC} GROUP user`, 'PARSE_SYNTAX_ERROR', 'user', 'last'],
    [`SELECT user ${SRC} FROM x`, 'PARSE_SYNTAX_ERROR', 'FROM x'],
    ['SELECT user FROM STREAM read_files(format => json)', 'PARSE_SYNTAX_ERROR', 'json'],
    ['SELECT user FROM STREAM read_files(format => 1 + 1)', 'PARSE_SYNTAX_ERROR', '1 + 1'],
  ])('%j is refused with %s at %j', (...row: string[]) => {
    const [sql, errorClass, at, which] = row; // a rest parameter: Jest reads a fourth parameter as `done`
    const position = at === '' ? sql.length : which === 'last' ? sql.lastIndexOf(at) : sql.indexOf(at);
    const e = errorOf(() => parseSql(sql));
    expect({ errorClass: e.errorClass, position: e.position }).toEqual({ errorClass, position });
    expect(e.message).toMatch(new RegExp(`^\\[${errorClass}\\] .* \\(line 1, column ${position + 1}\\)$`));
  });

  it('gives the line and the column of an error in a statement of several lines', () => {
    const e = errorOf(() => parseSql('SET queryName = q;\nSELECT user\nFROM STREAM read_files()\nWHERE ) > 1'));
    expect(e.errorClass).toBe('PARSE_SYNTAX_ERROR');
    expect([e.line, e.column]).toEqual([4, 7]);
  });
});

describe('compileSql refuses what Spark refuses, with its class, and what sluice does not take yet', () => {
  it.each([
    // Spark's refusals
    [`SELECT user, amount, count(*) ${SRC} GROUP BY user`, 'MISSING_AGGREGATION', 'amount'],
    [`SELECT *, count(*) ${SRC} GROUP BY user`, 'MISSING_AGGREGATION', '*'],
    [`SELECT user, sum(max(amount)) ${SRC} GROUP BY user`, 'NESTED_AGGREGATE_FUNCTION', 'max(amount)'],
    [`SELECT user, count(*) ${SRC} GROUP BY 3`, 'GROUP_BY_POS_OUT_OF_RANGE', '3'],
    [`SELECT user, count(*) ${SRC} GROUP BY 2`, 'GROUP_BY_POS_AGGREGATE', '2'],
    [`SELECT user, count(*) ${SRC} GROUP BY sum(amount)`, 'GROUP_BY_AGGREGATE', 'sum(amount)'],
    [`SELECT amout * 2 AS x ${SRC}`, 'UNRESOLVED_COLUMN.WITH_SUGGESTION', 'amout'],
    [`SELECT user ${SRC} WHERE amount + 1`, 'DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN', 'amount + 1'],
    [`SET outputMode = update; SELECT lower(usr), count(*) ${SRC} GROUP BY lower(usr)`, 'UNRESOLVED_COLUMN.WITH_SUGGESTION', 'usr', 'last'],
    [`SET outputMode = update; SELECT user, sum(amout * 2) ${SRC} GROUP BY user`, 'UNRESOLVED_COLUMN.WITH_SUGGESTION', 'amout'],
    [`SET queryName = a; SET QUERYNAME = b; SELECT user ${SRC}`, 'DUPLICATE_KEY', 'SET QUERYNAME'],
    // not supported (yet)
    [`SELECT user, count(*) ${SRC} GROUP BY user HAVING amount > 1`, 'MISSING_AGGREGATION', 'amount > 1'],
    [`SET outputMode = complete; SELECT user, count(*) AS n ${SRC} GROUP BY user ORDER BY 3`, 'ORDER_BY_POS_OUT_OF_RANGE', '3'],
    [`SET outputMode = complete; SELECT user, count(*) AS n ${SRC} GROUP BY user ORDER BY nn`, 'UNRESOLVED_COLUMN.WITH_SUGGESTION', 'nn'],
    [`SET outputMode = complete; SELECT user, count(*) AS n ${SRC} GROUP BY user LIMIT x`, 'PARSE_SYNTAX_ERROR', 'x'],
    // (a UNION without ALL is an aggregation: a union may not follow it)
    [`SET outputMode = update; SELECT user ${SRC} UNION SELECT user ${SRC} UNION ALL SELECT user ${SRC}`, 'UNSUPPORTED_FEATURE', 'UNION', 'last'],
    [`SELECT user, count(DISTINCT amount) ${SRC} GROUP BY user`, 'UNSUPPORTED_FEATURE', 'count(DISTINCT amount)'],
    ["SELECT user FROM read_files(schema => 'user STRING')", 'UNSUPPORTED_FEATURE', 'read_files'],
    ["SELECT user FROM STREAM delta('t', schema => 'user STRING')", 'UNSUPPORTED_FEATURE', 'delta'],
    ["SET trigger = '1 minute'; SELECT user FROM STREAM read_files(schema => 'user STRING')", 'UNSUPPORTED_FEATURE', 'SET trigger'],
  ])('%j: %s at %j', (...row: string[]) => {
    const [sql, errorClass, at, which] = row;
    const e = errorOf(() => compileSql(sql));
    expect(e.errorClass).toBe(errorClass);
    expect(e.position).toBe(which === 'last' ? sql.lastIndexOf(at) : sql.indexOf(at));
  });

  const TWO = `SET outputMode = append;
SELECT * FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP') AS a WATERMARK t DELAY OF INTERVAL 1 MINUTE
JOIN STREAM read_files(schema => 'k2 STRING, t2 TIMESTAMP') AS b WATERMARK t2 DELAY OF INTERVAL 1 MINUTE
  ON `;

  it.each([
    ["a.k = b.k2 AND a.k = 'x'", 'stages', "k = 'x'"],
    ["a.k = b.k2 AND b.t2 IS NOT NULL AND upper(B.k2) <> 'Z'", 'input', "upper(k2) <> 'Z'"],
    ['a.k = b.k2 AND a.t NOT BETWEEN b.t2 AND b.t2 + INTERVAL 1 MINUTE', 'join', 'NOT BETWEEN'],
  ])('ON %s: the other conjuncts are the join condition (pushed to the %s of their side, or checked in the join)', (on, where, text) => {
    const plan = compileSql(TWO + on);
    // an inner join: a one-side conjunct filters that side's input (the query's stages, or the joined input's), one of both sides stays in the join
    const stages = where === 'stages' ? plan.stages : where === 'input' ? plan.inputs![0].stages : [];
    if (where === 'join') expect(JSON.stringify(plan.stateful)).toContain(text);
    else expect(stages.some((s) => s.kind === 'filterExpr' && s.text.includes(text))).toBe(true);
  });

  it('ON without an equality of the two sides is refused, as is a conjunct with a qualifier of neither side', () => {
    const or = `${TWO}a.k = b.k2 OR a.t = b.t2`;
    expect(errorOf(() => compileSql(or)).message).toContain('a join needs at least one equality of columns (a.k = b.k)');
    const other = `${TWO}a.k = b.k2 AND c.k = 'x'`;
    expect(errorOf(() => compileSql(other)).message).toMatch(/c is not the alias of either side/);
    const ticked = `${TWO}a.k = b.k2 AND \`b\`.k2 = 'x'`;
    expect(errorOf(() => compileSql(ticked))).toMatchObject({ errorClass: 'UNSUPPORTED_FEATURE', position: ticked.indexOf('`b`.k2') });
  });

  it('refuses ON a.k = b.k over two columns of one name (use USING), an unknown alias, a qualified name of the wrong side and a RIGHT join with a static table', () => {
    const same = errorOf(() =>
      compileSql(`SELECT * FROM STREAM read_files(schema => 'k STRING') AS a JOIN STREAM read_files(schema => 'k STRING') AS b ON a.k = b.k`),
    );
    expect(same.message).toMatch(/both sides would output a column k: write USING \(k\)/);
    const both = `SELECT * FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP') JOIN STREAM read_files(schema => 'k2 STRING, t TIMESTAMP') ON k = k2 AND t = t`;
    expect(errorOf(() => compileSql(both))).toMatchObject({ errorClass: 'AMBIGUOUS_REFERENCE', position: both.lastIndexOf('t = t') });
    const alias = errorOf(() =>
      compileSql(`SELECT * FROM STREAM read_files(schema => 'k STRING') AS a JOIN STREAM read_files(schema => 'k2 STRING') AS b ON c.k = b.k2`),
    );
    expect(alias.errorClass).toBe('UNRESOLVED_COLUMN');
    // outside ON a qualified name is its side's column (sql-plans.test.ts), and a column the side lacks is Spark's UNRESOLVED_COLUMN at its place
    const otherSide = `SELECT b.k FROM STREAM read_files(schema => 'k STRING') AS a JOIN STREAM read_files(schema => 'k2 STRING') AS b ON a.k = b.k2`;
    expect(errorOf(() => compileSql(otherSide))).toMatchObject({ errorClass: 'UNRESOLVED_COLUMN.WITH_SUGGESTION', position: otherSide.indexOf('b.k') });
    const right = `SELECT * FROM STREAM read_files(schema => 'k STRING') RIGHT JOIN read_files('s3://b/t/', schema => 'k STRING') USING (k)`;
    expect(errorOf(() => compileSql(right))).toMatchObject({ errorClass: 'UNSUPPORTED_FEATURE', position: right.indexOf('RIGHT') });
  });

  it("keeps the frame API's own refusals, with the line and column of the clause they are about", () => {
    expect(() => compileSql('SELECT *\nFROM STREAM read_files()')).toThrow(/the source has no schema: .* \(line 2, column 13\)$/);
    expect(() => compileSql(`SELECT user, count(*)\n${SRC}\nGROUP BY user`)).toThrow(
      /^Append output mode not supported when there are streaming aggregations .* \(line 3, column 10\)$/,
    );
    expect(() => compileSql(`SET queryName = q;\nSET outputMode = sometimes;\nSELECT user ${SRC}`)).toThrow(
      /^output mode "sometimes" is not one of append, update, complete \(line 2, column 1\)$/,
    );
  });
});
