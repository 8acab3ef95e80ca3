/**
 * What a SQL aggregation computes after its groups (aggregate.ts): a select item that is an
 * expression over aggregates or grouping columns (`round(avg(x), 2)`, `sum(a) / count(*)`,
 * `upper(k)`), and HAVING. Spark evaluates both over the aggregation's output; so does sluice:
 * each aggregate call inside such an expression becomes an aggregate of its own under a hidden
 * name (one per distinct call), the expression is rewritten to read it, HAVING is a filter over
 * the aggregation's output, and a last selectExpr gives the select list its names and order,
 * dropping the hidden columns. A query without either keeps the plan it always had.
 */
import { type Token, tokenize } from '../expr/lexer';
import { type Ast, parseExpression } from '../expr/parser';
import type { SqlExpr } from './syntax';

type CallAst = Extract<Ast, { k: 'call' }>;

/** An aggregate call in an expression, with where it is in the query's text (its FILTER and IGNORE NULLS included). */
export interface AggregateCall {
  readonly ast: CallAst;
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** A part of an expression's text to write otherwise. */
export interface Replacement {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** The prefix of a hidden aggregate's name: no input column or select alias is expected to start with it. */
const HIDDEN = 'sluice_hidden_agg_';

/** The name of the hidden aggregate `i` (a trailing `_`, so that no name is the start of another). */
export function hiddenName(i: number): string {
  return `${HIDDEN}${i}_`;
}

/** A name as a backquoted identifier. */
export function quoted(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

/** A text's tokens without the end marker. */
export function words(text: string): Token[] {
  return tokenize(text).filter((t) => t.kind !== 'eof');
}

/** A token as texts are compared: a word in upper case, so that two spellings of one expression compare equal. */
export function tokenKey(t: Token): string {
  return t.kind === 'ident' ? `i:${t.text.toUpperCase()}` : `${t.kind}:${t.text}`;
}

/** Whether `pos` falls in one of `spans`. */
export function inSpans(spans: ReadonlyArray<{ readonly start: number; readonly end: number }>, pos: number): boolean {
  return spans.some((r) => pos >= r.start && pos < r.end);
}

/** The child nodes of an AST node, those held in plain objects too (a CASE's `{ when, result }` branches). */
export function astChildren(a: Ast): Ast[] {
  const out: Ast[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v !== null && typeof v === 'object') {
      if ('k' in v) out.push(v as Ast);
      else for (const x of Object.values(v)) visit(x);
    }
  };
  // (a literal's type and a cast's target are types, not nodes)
  for (const [key, v] of Object.entries(a)) if (key !== 'type' && key !== 'to') visit(v);
  return out;
}

/** Where the call that starts at `start` ends: after its closing parenthesis, its `WITHIN GROUP (...)`, its `FILTER (WHERE ...)` and its `IGNORE|RESPECT NULLS`. */
function callEnd(sql: string, start: number, limit: number): number {
  const tokens = tokenize(sql.slice(start, limit));
  let i = tokens.findIndex((t) => t.kind === 'op' && t.text === '(');
  /** The index of the token that closes the parenthesis at tokens[i]. */
  const closing = (open: number): number => {
    let depth = 0;
    for (let j = open; j < tokens.length; j++) {
      const t = tokens[j];
      if (t.kind !== 'op') continue;
      if (t.text === '(') depth++;
      else if (t.text === ')' && --depth === 0) return j;
    }
    return tokens.length - 1;
  };
  i = closing(i);
  const word = (j: number, w: string) => tokens[j]?.kind === 'ident' && tokens[j].text.toUpperCase() === w;
  if (word(i + 1, 'WITHIN') && word(i + 2, 'GROUP') && tokens[i + 3]?.text === '(') i = closing(i + 3);
  if (word(i + 1, 'FILTER') && tokens[i + 2]?.text === '(') i = closing(i + 2);
  if ((word(i + 1, 'IGNORE') || word(i + 1, 'RESPECT')) && word(i + 2, 'NULLS')) i += 2;
  const last = tokens[i];
  return start + last.pos + last.text.length;
}

/** The outermost aggregate calls in `e` (`isAggregate` says which calls are), in the order they are written. */
export function aggregateCalls(sql: string, e: SqlExpr, isAggregate: (a: Ast) => boolean): AggregateCall[] {
  const limit = e.pos + e.text.length;
  const out: AggregateCall[] = [];
  const walk = (a: Ast) => {
    if (a.k === 'call' && isAggregate(a)) {
      const end = callEnd(sql, a.pos, limit);
      out.push({ ast: a, start: a.pos, end, text: sql.slice(a.pos, end) });
      return;
    }
    for (const c of astChildren(a)) walk(c);
  };
  walk(e.ast);
  return out.sort((x, y) => x.start - y.start);
}

/** The one-part column names `e` reads (outside its aggregate calls), each with where it is written. */
export function columnRefs(sql: string, e: SqlExpr, isAggregate: (a: Ast) => boolean): Array<{ name: string; start: number; end: number }> {
  const out: Array<{ name: string; start: number; end: number }> = [];
  const walk = (a: Ast) => {
    if (a.k === 'call' && isAggregate(a)) return;
    if (a.k === 'lambda') return; // (a lambda's parameters are not columns)
    if (a.k === 'name') {
      // as written: a backquoted name runs to its closing backquote (a doubled one is part of it)
      let end = a.pos;
      if (sql[a.pos] === '`') {
        end = a.pos + 1;
        while (end < sql.length && !(sql[end] === '`' && sql[end + 1] !== '`')) end += sql[end] === '`' ? 2 : 1;
        end++;
      } else while (end < sql.length && /[A-Za-z0-9_]/.test(sql[end])) end++;
      out.push({ name: a.parts[0], start: a.pos, end });
      return;
    }
    for (const c of astChildren(a)) walk(c);
  };
  walk(e.ast);
  return out;
}

/** `e`'s text with the replacements made (they do not overlap). */
export function rewritten(e: SqlExpr, replacements: readonly Replacement[]): string {
  let text = '';
  let at = e.pos;
  for (const r of [...replacements].sort((x, y) => x.start - y.start)) {
    text += e.text.slice(at - e.pos, r.start - e.pos) + r.text;
    at = r.end;
  }
  return text + e.text.slice(at - e.pos);
}

/**
 * Where `e` (outside `skip`, its aggregate calls) holds one of the grouping expressions `groups`
 * (each given by its text: `lower(k)`, `a + b`): its span and the index of the group, so that it
 * can read the group's key column, as Spark resolves a grouping expression inside a select item
 * or HAVING. A match is by tokens (words in any case, the same arguments), and only of a whole
 * part of `e`'s syntax tree: `(a + b) * 2` holds `a + b`, `x * a + b` does not (it is `(x * a) + b`),
 * nor does `s.lower(k)` hold `lower(k)`. A group written in parentheses matches without them.
 */
export function groupingExprs(
  e: SqlExpr,
  groups: ReadonlyArray<{ index: number; text: string }>,
  skip: ReadonlyArray<{ start: number; end: number }>,
): Array<{ start: number; end: number; group: number }> {
  if (groups.length === 0) return [];
  const wanted = groups.map((g) => ({ index: g.index, tokens: unwrapped(words(g.text)).map(tokenKey) }));
  const tokens = words(e.text);
  const keys = tokens.map(tokenKey);
  const tree = treeShape(e.ast);
  const out: Array<{ start: number; end: number; group: number }> = [];
  for (let i = 0; i < tokens.length; i++) {
    const start = e.pos + tokens[i].pos;
    if (inSpans(skip, start)) continue;
    const hit = wanted.find(
      (w) => w.tokens.length > 0 && w.tokens.every((k, j) => keys[i + j] === k) && wholePart(e, tree, tokens[i], tokens[i + w.tokens.length - 1]),
    );
    if (hit === undefined) continue;
    const last = tokens[i + hit.tokens.length - 1];
    out.push({ start, end: e.pos + last.pos + last.text.length, group: hit.index });
    i += hit.tokens.length - 1;
  }
  return out;
}

/** The tokens without parentheses around all of them. */
function unwrapped(tokens: Token[]): Token[] {
  let t = tokens;
  while (t.length >= 2 && t[0].text === '(' && t[t.length - 1].text === ')' && closes(t)) t = t.slice(1, -1);
  return t;
}

/** Whether the parenthesis that opens `tokens` is closed by its last token. */
function closes(tokens: Token[]): boolean {
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].kind !== 'op') continue;
    if (tokens[i].text === '(') depth++;
    else if (tokens[i].text === ')' && --depth === 0) return i === tokens.length - 1;
  }
  return false;
}

/** The keys of a syntax tree's nodes that say where they are, not what they are. */
const POSITIONS: ReadonlySet<string> = new Set(['pos', 'start', 'end', 'at']);

/** A syntax tree as text, without where its nodes are: two trees of one expression compare equal. */
function treeShape(a: Ast): string {
  return JSON.stringify(a, (key, v: unknown) => (POSITIONS.has(key) ? undefined : typeof v === 'bigint' ? `${v}n` : v));
}

/**
 * Whether the tokens from `first` to `last` of `e` are a whole part of its tree: putting them in
 * parentheses leaves the tree as it is (around anything else, parentheses change it).
 */
function wholePart(e: SqlExpr, tree: string, first: Token, last: Token): boolean {
  const from = first.pos;
  const to = last.pos + last.text.length;
  try {
    return treeShape(parseExpression(`${e.text.slice(0, from)}(${e.text.slice(from, to)})${e.text.slice(to)}`)) === tree;
  } catch {
    return false;
  }
}
