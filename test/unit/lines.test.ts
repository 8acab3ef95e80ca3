/**
 * parseLineChunks: JSON-lines text into chunks of rows with dead letters located by line.
 */
import { compileLineParser } from '../../lib/engine/json-scan';
import { CHUNK_LINES, INVALID_UTF8_REASON, invalidUtf8Lines, parseLineChunks, type LineCursor } from '../../lib/engine/lines';
import { parseSchema } from '../../lib/engine/schema';

const parse = compileLineParser(parseSchema('n INT'));
const collect = (text: string, cursor: LineCursor) => [...parseLineChunks(parse, 'f.json', text, cursor)];

describe('parseLineChunks', () => {
  it(`cuts ${CHUNK_LINES} lines per chunk, keeps file order and counts the bytes once`, () => {
    const total = CHUNK_LINES * 2 + 3;
    const text = Array.from({ length: total }, (_, i) => `{"n":${i}}`).join('\n');
    const cursor = { lineNo: 0, bytes: 1234 };
    const chunks = collect(text, cursor);
    expect(chunks.map((c) => c.rows.length)).toEqual([CHUNK_LINES, CHUNK_LINES, 3]);
    expect(chunks.map((c) => c.bytes)).toEqual([1234, 0, 0]);
    expect(chunks.flatMap((c) => c.rows.map((r) => r.n))).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(cursor.lineNo).toBe(total);
  });

  it('starts a new chunk at a dead letter that follows rows, so a chunk holds its dead letters before its rows (input order)', () => {
    const chunks = collect('{"n":1}\n{"n":"x"}\n{"n":"y"}\n{"n":2}\n{"n":3}\n{"n":"z"}\n', { lineNo: 0, bytes: 7 });
    expect(chunks.map((c) => [c.deadLetters.map((d) => d.source.line), c.rows.map((r) => r.n), c.bytes])).toEqual([
      [[], [1], 7],
      [[2, 3], [2, 3], 0],
      [[6], [], 0],
    ]);
  });

  it('numbers lines across pieces of a file, skips blank lines and drops a trailing CR', () => {
    const cursor = { lineNo: 0, bytes: 0 };
    const first = collect('{"n":1}\r\n\n   \n{"n":"x"}\n', cursor);
    const second = collect('{bad\n{"n":2}', cursor);
    expect(first.flatMap((c) => c.rows)).toEqual([{ n: 1 }]);
    expect(first.flatMap((c) => c.deadLetters).map((d) => [d.source, d.raw])).toEqual([[{ file: 'f.json', line: 4 }, '{"n":"x"}']]);
    expect(second.flatMap((c) => c.deadLetters).map((d) => d.source)).toEqual([{ file: 'f.json', line: 5 }]);
    expect(second.flatMap((c) => c.rows)).toEqual([{ n: 2 }]);
    expect(cursor.lineNo).toBe(6);
  });
});

describe('a line that is not valid UTF-8', () => {
  const schema = parseSchema('s STRING');
  const strings = compileLineParser(schema);
  // line 2 holds a lone continuation byte and line 4 a truncated 3-byte sequence; "é" on line 3 is valid
  const bytes = Buffer.concat([
    Buffer.from('{"s":"a"}\n{"s":"'),
    Buffer.from([0x80]),
    Buffer.from('"}\n{"s":"é"}\n{"s":"'),
    Buffer.from([0xe2, 0x82]),
    Buffer.from('"}\n'),
  ]);

  it('is found line by line, and only when the bytes are not UTF-8', () => {
    expect(invalidUtf8Lines(Buffer.from('{"s":"é"}\n{"s":"b"}\n'))).toBeNull();
    expect([...invalidUtf8Lines(bytes)!]).toEqual([1, 3]);
  });

  it('is a dead letter with its line number, where decoding alone would have kept U+FFFD silently', () => {
    const text = bytes.toString('utf8');
    expect(text).toContain('\ufffd'); // what the decoder does on its own: a valid-looking row
    const chunks = [...parseLineChunks(strings, 'f.json', text, { lineNo: 0, bytes: 0 }, invalidUtf8Lines(bytes))];
    expect(chunks.flatMap((c) => c.rows)).toEqual([{ s: 'a' }, { s: 'é' }]);
    expect(chunks.flatMap((c) => c.deadLetters).map((d) => [d.source, d.reason])).toEqual([
      [{ file: 'f.json', line: 2 }, INVALID_UTF8_REASON],
      [{ file: 'f.json', line: 4 }, INVALID_UTF8_REASON],
    ]);
  });
});
