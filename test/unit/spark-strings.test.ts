/**
 * String functions against Spark's semantics. Expectations are worked by hand from Spark's source
 * (UTF8String.indexOf / toTitleCase / split / trim, RegExpExtract, RegExpReplace, StringUtils.escapeLikeRegex,
 * FormatNumber) and from java.util.regex.Pattern / Matcher and java.text.DecimalFormat's documented rules.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('s STRING, p STRING');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
/** The messages of a refusal and of a row error, which the assertions read. */
const refused = (text: string) => refusalOf(text, COLS).message;
const rowError = (text: string, row: Record<string, unknown>) => rowErrorOf(text, COLS, row).message;

/** One test per [s, pattern, expected] of a table: `s RLIKE pattern` is expected. */
function rlikeCases(cases: readonly (readonly [string, string, boolean])[]): void {
  it.each(cases)('%j RLIKE %j is %s', (s, p, expected) => {
    expect(value('s RLIKE p', { s, p })).toBe(expected);
  });
}

describe('Java regex: anchors and line terminators', () => {
  rlikeCases([
    ['abc\n', 'c$', true], // Java's $ also matches before a final line terminator
    ['abc\r\n', 'c$', true],
    ['abc\n\n', 'c$', false],
    ['abc\n', 'c\\z', false],
    ['abc\n', 'c\\Z', true],
    ['abc', '\\Aa', true],
    ['bab', '\\Ab', true],
    ['ab', '\\Ab', false],
    ['a\nb', '^b', false],
    ['a\nb', '(?m)^b', true],
    ['a\nb', 'a$', false],
    ['a\nb', '(?m)a$', true],
    ['a\nb', 'a.b', false],
    ['a\nb', '(?s)a.b', true],
    ['a\u0085b', 'a.b', false], // NEL is a Java line terminator
  ]);
});

describe('Java regex: character classes Java defines differently', () => {
  rlikeCases([
    ['a\u00a0b', 'a\\sb', false], // \s is ASCII whitespace in Java
    ['a\tb', 'a\\sb', true],
    ['a\u00a0b', 'a\\hb', true], // \h is horizontal whitespace
    ['a\nb', 'a\\vb', true], // \v is any vertical whitespace, not just VT
    ['a\r\nb', 'a\\Rb', true],
    ['abc', '^\\p{Alpha}+$', true],
    ['été', '^\\p{Alpha}+$', false], // POSIX classes are US-ASCII
    ['été', '^\\p{L}+$', true],
    ['été', '^\\p{IsLatin}+$', true],
    ['été', '^\\p{javaLowerCase}+$', true],
    ['!?', '^\\p{Punct}+$', true],
    ['b', '^[[:alpha:]]$', false], // [[:alpha:]] is the union of ':', 'a', 'l', 'p', 'h' in Java
    [':', '^[[:alpha:]]$', true],
    ['h', '^[[:alpha:]]$', true],
    [']', '^[]a]$', true], // ] first in a class is a literal
    ['bcd', '^[a-z&&[^aeiou]]+$', true], // intersection
    ['bed', '^[a-z&&[^aeiou]]+$', false],
    ['x', '^[a-c[x-z]]$', true], // union
    ['a.b', '^\\Qa.b\\E$', true], // \Q...\E quotes
    ['axb', '^\\Qa.b\\E$', false],
    ['a+', '^[\\Q+\\E]?a\\Q+\\E$', true],
    ['😀', '^.$', true], // . is one code point
    ['😀', '^[^a]$', true],
    ['\u00e9', '^\\x{e9}$', true],
    ['\u0001', '^\\01$', true],
    ['\u001b', '^\\e$', true],
  ]);
});

describe('Java regex: flags', () => {
  rlikeCases([
    ['ABC', '(?i)abc', true],
    ['aBC', 'a(?i)bc', true], // an inline flag applies from where it stands
    ['ABC', 'a(?i)bc', false],
    ['aBc', 'a(?i:b)c', true],
    ['aBC', 'a(?i:b)c', false],
    ['ABC', '(?i)[a-c]+$', true],
    ['É', '(?i)é', false], // CASE_INSENSITIVE folds US-ASCII only
    ['É', '(?iu)é', true], // with UNICODE_CASE it folds all
    ['a', '(?i)^[^A]$', false], // [^A] excludes a too
    ['ab', '(?x) a b  # a comment', true],
    ['a b', '(?x)a\\ b', true],
    ['ab', '(?x)[a b]+', true],
  ]);
});

describe('Java regex: patterns sluice refuses rather than match differently', () => {
  it.each([
    ["s RLIKE 'a*+'", 'possessive'],
    ["s RLIKE '(?>a|ab)c'", 'atomic'],
    ["s RLIKE '\\\\p{InGreek}'", 'block'],
    ["s RLIKE '\\\\Ga'", '\\G'],
    ["regexp_extract(s, '(?U)\\\\w', 0)", 'UNICODE_CHARACTER_CLASS'],
    ["s RLIKE '('", 'INVALID_PARAMETER_VALUE.PATTERN'], // Java refuses it too
    ["s RLIKE '\\\\y'", 'Illegal/unsupported escape'], // an unknown letter escape is an error in Java
    ["split(s, '[a-')", 'INVALID_PARAMETER_VALUE.PATTERN'],
  ])('%s is refused (%s)', (text, why) => {
    const m = refused(text);
    expect(m).toContain('[INVALID_PARAMETER_VALUE.PATTERN]');
    expect(m).toContain(why);
  });

  it('refuses a look-behind without an obvious maximum length, as Java does', () => {
    expect(refused("s RLIKE '(?<=a+)b'")).toContain('maximum length');
    expect(value('s RLIKE p', { s: 'aab', p: '(?<=a{1,2})b' })).toBe(true);
  });

  it('refuses a format_number pattern it cannot format', () => {
    expect(refused("format_number(1.5D, '0.0E0')")).toContain('[INVALID_PARAMETER_VALUE.PATTERN]');
    expect(refused("format_number(1.5D, '#%%')")).toContain('[INVALID_PARAMETER_VALUE.PATTERN]'); // Java: too many percent characters
  });

  it('a pattern from a column that cannot compile is a row error', () => {
    expect(rowError('s RLIKE p', { s: 'a', p: 'a*+' })).toMatch(/^\[INVALID_PARAMETER_VALUE\.PATTERN\] .*possessive/);
  });
});

describe('regexp_extract', () => {
  it.each([
    ["regexp_extract('100-200', '(\\\\d+)-(\\\\d+)', 2)", '200'],
    ["regexp_extract('100-200', '(\\\\d+)-(\\\\d+)', 0)", '100-200'],
    ["regexp_extract('a', '(a)|(b)', 2)", ''], // an optional group that did not take part is ''
    ["regexp_extract('x=été;', '(\\\\p{L}+);', 1)", 'été'],
    ["regexp_extract('2026-10', '(?<y>\\\\d+)-(?<m>\\\\d+)', 2)", '10'],
    // no match: '' without looking at the group index (RegExpExtract checks it only after find())
    ["regexp_extract('abc', 'x', 1)", ''],
    ["regexp_extract('abc', '(x)', 5)", ''],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it('a group index beyond the groups of a matching pattern is REGEX_GROUP_INDEX', () => {
    expect(rowError("regexp_extract(s, 'b', 1)", { s: 'abc' })).toMatch(/^\[INVALID_PARAMETER_VALUE\.REGEX_GROUP_INDEX\] .*between 0 and 0, but got 1/);
    expect(rowError("regexp_extract(s, '(b)', -1)", { s: 'abc' })).toMatch(/REGEX_GROUP_INDEX/);
  });
});

describe('regexp_replace: Java replacement syntax and position', () => {
  it.each([
    ["regexp_replace('abc', 'b', '[$0]')", 'a[b]c'], // $0 is the whole match
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Java's replacement syntax
    ["regexp_replace('2026-10', '(?<y>\\\\d+)-(?<m>\\\\d+)', '${m}/${y}')", '10/2026'],
    ["regexp_replace('ab', '(a)', '$12')", 'a2b'], // $1 then '2': 12 is not a group
    ["regexp_replace('ab', 'a', '\\\\$1')", '$1b'], // \$ is a literal $
    ["regexp_replace('ab', 'a', '\\\\\\\\')", '\\b'], // \\ is a literal backslash
    ["regexp_replace('abc', 'x', '$')", 'abc'], // no match: the replacement is never read
    ["regexp_replace('aaa', 'a', 'b', 2)", 'abb'],
    ["regexp_replace('abc', 'c', 'x', 4)", 'abc'], // a position past the end leaves the string
    ["regexp_replace('abc', '^', 'x', 2)", 'axbc'], // the region starts at the position: ^ matches there
    ["regexp_replace('', '^$', 'x')", 'x'],
    ["regexp_replace('a😀b', '.', '-')", '---'],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it("a replacement Java's appendReplacement refuses fails the row", () => {
    expect(rowError("regexp_replace(s, 'b', '$')", { s: 'abc' })).toContain('group index is missing');
    expect(rowError("regexp_replace(s, '(b)', '$2')", { s: 'abc' })).toContain('No group 2');
    expect(rowError("regexp_replace(s, 'b', 'x\\\\')", { s: 'abc' })).toContain('character to be escaped is missing');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Java's replacement syntax
    expect(rowError("regexp_replace(s, '(b)', '${n}')", { s: 'abc' })).toContain('No group with name {n}');
  });

  it('refuses a position that is not a positive literal', () => {
    expect(refused("regexp_replace(s, 'a', 'b', 0)")).toContain('[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE]');
    expect(refused("regexp_replace(s, 'a', 'b', length(s))")).toContain('[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT]');
  });
});

describe('split', () => {
  it.each([
    ["split('a1b2c3', '\\\\d')", ['a', 'b', 'c', '']],
    ["split(',a', ',')", ['', 'a']], // a match of width > 0 at the start gives a leading ""
    ["split('abc', '(?=b)')", ['a', 'bc']],
    ["split('abc', 'x*')", ['a', 'b', 'c', '']], // Java: zero-width matches, the last one at the end
    ["split('abc', '')", ['a', 'b', 'c']], // Spark's own path for the empty pattern
    ["split('abc', '', 2)", ['a', 'bc']],
    ["split('a😀b', '')", ['a', '😀', 'b']],
    ["split('', ',')", ['']],
    ["split('', '')", ['']],
    ["split('a,b,c', ',', 2)", ['a', 'b,c']],
    ["split('a,b,,', ',', 0)", ['a', 'b', '', '']],
    ["split('a,b,,', ',', -5)", ['a', 'b', '', '']],
    ["split('a,b,,', ',', 1)", ['a,b,,']],
    ["split('a.b', '.')", ['', '', '', '']], // '.' is a regex
    ["split('a|b', '[|]')", ['a', 'b']],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });
});

describe('LIKE: the escape character rules of escapeLikeRegex', () => {
  it.each([
    ["'a%b' LIKE 'a\\\\%b'", true],
    ["'axb' LIKE 'a\\\\%b'", false],
    ["'a\\\\b' LIKE 'a\\\\\\\\b'", true],
    ["'a.c' LIKE 'a.c'", true],
    ["'abc' LIKE 'a.c'", false], // regex metacharacters are literal
    ["'a(b' LIKE 'a(_'", true],
    ["'a\\nb' LIKE 'a_b'", true], // _ and % match line terminators
    ["'😀' LIKE '_'", true], // _ is one code point
    ["'a_b' LIKE 'a!_b' ESCAPE '!'", true],
    ["'axb' LIKE 'a!_b' ESCAPE '!'", false],
  ])('%s is %s', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it('refuses a literal pattern whose escape character precedes another character or ends it', () => {
    expect(refused("s LIKE 'a\\\\b'")).toContain('[INVALID_FORMAT.ESC_IN_THE_MIDDLE]');
    expect(refused("s LIKE 'a\\\\'")).toContain('[INVALID_FORMAT.ESC_AT_THE_END]');
    expect(refused("s LIKE 'a!b' ESCAPE '!'")).toContain('[INVALID_FORMAT.ESC_IN_THE_MIDDLE]');
  });

  it('ILIKE is lower(str) LIKE lower(pattern)', () => {
    expect(value("'SPARK' ILIKE 'sp_rk'")).toBe(true);
    expect(value("'\u0130' ILIKE 'i_'")).toBe(true); // lower('İ') is i and a combining dot: two characters
  });

  it('refuses an ESCAPE string that is not one character (INVALID_ESC)', () => {
    expect(refused("s LIKE 'a!%' ESCAPE '!!'")).toContain('[INVALID_ESC]');
  });

  it('a pattern from a column with a bad escape fails the row', () => {
    expect(rowError('s LIKE p', { s: 'ab', p: 'a\\b' })).toMatch(/^\[INVALID_FORMAT\.ESC_IN_THE_MIDDLE\]/);
  });
});

describe('locate: UTF8String.indexOf and StringLocate', () => {
  it.each([
    ["locate('', 'abc', 3)", 1], // the empty string is found at 0 whatever the start
    ["locate('', 'abc', 10)", 1],
    ["locate('', 'abc', 0)", 0], // a start below 1 is 0 first
    ["locate('c', 'abc', 4)", 0],
    ["locate('b', 'a😀b', 2)", 3],
    ['locate(NULL, s, NULL)', 0], // a null start is 0 before the strings are looked at
    ["locate('a', s, CAST(NULL AS INT))", 0],
    ["locate(NULL, 'abc', 1)", null],
    ["instr('abc', '')", 1],
  ])('%s is %j', (text, expected) => {
    expect(value(text, { s: null })).toBe(expected);
  });
});

describe('trim with a trim string: TRIM([BOTH | LEADING | TRAILING] trimStr FROM str)', () => {
  it.each([
    ["trim(BOTH 'SL' FROM 'SSparkSQLS')", 'parkSQ'],
    ["trim(LEADING 'x' FROM 'xxaxx')", 'axx'],
    ["trim(TRAILING 'xy' FROM 'axyyx')", 'a'],
    ["trim('x' FROM 'xax')", 'a'],
    ["trim(BOTH FROM '  a  ')", 'a'],
    ["trim(LEADING FROM '  a  ')", 'a  '],
    ["trim('x', 'xxax')", 'a'], // the two-argument function form is (trimStr, str)
    ["ltrim('x', 'xxax')", 'ax'],
    ["rtrim('x', 'xxax')", 'xxa'],
    ["btrim('xxax', 'x')", 'a'],
    ["trim('', ' a ')", ' a '],
    ["trim('😀', '😀a😀')", 'a'],
    ["trim(BOTH NULL FROM 'a')", null],
    ["trim(' \\t')", '\t'],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it('names the column as Spark prints the trim', () => {
    const c = compileExpression("trim(BOTH 'x' FROM s)", parseDdlColumns('s STRING'));
    expect(c.type.name).toBe('TRIM(BOTH x FROM s)');
  });
});

describe('initcap: lower-case, then title-case after a space only', () => {
  it.each([
    ["initcap('hello\\tworld')", 'Hello\tworld'], // only ' ' starts a word
    ["initcap('ÉCOLE publique')", 'École Publique'],
    ["initcap('ßa ßb')", 'ßa ßb'], // Character.toTitleCase('ß') is 'ß'
    ["initcap('ǆemal')", 'ǅemal'], // the title case of a digraph
    ["initcap('')", ''],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });
});

describe('format_number: DecimalFormat HALF_EVEN on the exact value', () => {
  it.each([
    ['format_number(1.015D, 2)', '1.01'], // the double is 1.01499999999999990230037...
    ['format_number(2.675D, 2)', '2.67'],
    ['format_number(0.125D, 2)', '0.12'], // an exact tie goes to even
    ['format_number(0.375D, 2)', '0.38'],
    ['format_number(2.5D, 0)', '2'],
    ['format_number(3.5D, 0)', '4'],
    ['format_number(0.1D, 20)', '0.10000000000000000000'], // the double's shortest digits, padded
    ['format_number(-0.001D, 2)', '-0.00'], // DecimalFormat keeps the sign of a negative value
    ['format_number(CAST(-0.001 AS DECIMAL(10,3)), 2)', '-0.00'],
    ['format_number(9007199254740993L, 0)', '9,007,199,254,740,993'], // a long is formatted exactly
    ['format_number(CAST(1234567.125 AS DECIMAL(12,3)), 2)', '1,234,567.12'],
    ['format_number(-1234567, 1)', '-1,234,567.0'],
    ['format_number(12332.123456, -1)', null],
    // a DecimalFormat pattern as the second argument
    ["format_number(12332.123456, '##################.###')", '12332.123'],
    ["format_number(12332.123456, '')", '12,332'], // Spark's default pattern #,###,...,##0
    ["format_number(0.5D, '#.##')", '.5'], // no minimum integer digit
    ["format_number(0.001D, '#.##')", '0'], // nothing left: a zero
    ["format_number(1234.5D, '$#,##0.00')", '$1,234.50'],
    ["format_number(-5, '$#,##0.00')", '-$5.00'],
    ["format_number(1234.5D, '#.')", '1234.'],
    ["format_number(1234567.891D, '#,##,##0.0#')", '1,234,567.89'], // Java groups by the last interval only
    ['format_number(CAST(NULL AS DOUBLE), 2)', null],
    // a % (‰) in the prefix or suffix multiplies by 100 (1000): a double in double arithmetic, as
    // DecimalFormat (0.145 * 100 is 14.499999999999998, still 14.5 to one decimal), a DECIMAL or a long exactly
    ["format_number(0.1234D, '0.0%')", '12.3%'],
    ["format_number(0.145D, '#.#%')", '14.5%'],
    ["format_number(0.125D, '0%')", '12%'], // 12.5 exactly: HALF_EVEN
    ["format_number(CAST(0.125 AS DECIMAL(4,3)), '0%')", '12%'],
    ["format_number(-0.5, '#%')", '-50%'],
    ["format_number(12, '#,##0%')", '1,200%'],
    ["format_number(0.5, '%#')", '%50'],
    ["format_number(0.01234D, '0.00\u2030')", '12.34\u2030'],
    ["format_number(CAST(0.000005 AS DECIMAL(7,6)), '0.0%')", '0.0%'],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });
});

describe('more string functions of Spark', () => {
  it.each([
    ["substring_index('www.apache.org', '.', -2)", 'apache.org'],
    ["substring_index('www.apache.org', '.', 5)", 'www.apache.org'], // fewer delimiters: the whole string
    ["substring_index('www.apache.org', '.', 0)", ''],
    ["substring_index('www.apache.org', '', 1)", ''],
    ["substring_index('aaa', 'aa', 2)", 'a'], // UTF8String.subStringIndex searches from the next character: overlapping
    ["substring_index('aaa', 'aa', -2)", 'a'],
    ["translate('AaBbCc', 'abc', '1')", 'A1BC'], // characters past the end of `to` are removed
    ["translate('abc', 'aa', 'xy')", 'xbc'], // the first mapping of a character wins
    ["translate('a😀b', '😀', 'x')", 'axb'],
    ["split_part('11.12.13', '.', -1)", '13'],
    ["split_part('11.12.13', '.', 4)", ''],
    ["split_part('11.12.13', '.', -4)", ''],
    ["split_part('a|b', '|', 2)", 'b'], // the delimiter is literal, not a regex
    ["regexp_substr('abc', 'x')", null],
    ["regexp_substr('abc', 'x*')", null], // an empty match is null (nullif(..., ''))
    ["regexp_count('abc', 'x*')", 4], // zero-width matches at each of the 4 positions
    ["regexp_instr('abc', 'x')", 0],
    ["regexp_instr('abc', 'x*')", 1], // an empty match at the start
    ["regexp_instr('😀b', 'b')", 3], // UTF-16 units, as Java's Matcher.start
    ["regexp_instr('a(b)', '(b)', 1)", 3], // idx is not read: the whole match's start
    ["regexp_instr('abc', 'b', CAST(NULL AS INT))", null],
    ["quote('a\\\\b')", "'a\\b'"], // a backslash stays one
    ["quote('')", "''"],
    ["regexp_extract_all('abc', '(x)', 5)", []], // no match: no group check
    ["regexp_extract_all('a1b22', '(\\\\d+)', 1)", ['1', '22']],
    ["rlike('Spark', 'ar')", true],
    ["regexp_like('a\\nb', 'a$')", false],
    ["octet_length('é😀')", 6],
    ["character_length('é😀')", 2],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });

  it('split_part with part 0 is INVALID_INDEX_OF_ZERO', () => {
    expect(rowError("split_part(s, '.', 0)", { s: 'a.b' })).toMatch(/^\[INVALID_INDEX_OF_ZERO\]/);
  });

  it('regexp_extract_all checks the group index when a match is found', () => {
    expect(rowError("regexp_extract_all(s, 'b', 1)", { s: 'abc' })).toMatch(/^\[INVALID_PARAMETER_VALUE\.REGEX_GROUP_INDEX\]/);
  });
});
