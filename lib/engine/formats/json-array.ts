/**
 * A JSON line that is an array, as Spark's JSON reader takes it (JacksonParser's struct root
 * converter, SPARK-3308): each element a row, an empty array none; an element that is not an
 * object (a number, null, an array) or does not fit the schema makes the whole line one bad
 * record (a dead letter), as Spark's whole record is. Also the top-level values of a multiLine
 * file. Off the fast path: only a line the reference refused as "not an object" comes here.
 */
import type { Row } from '../ports';
import type { Schema } from '../schema';
import { type JsonPatterns, parseJsonLine } from '../json-record';
import { firstValueEnd, strictJson } from './lenient-json';

/** Whether the text is one JSON value (JSON.parse takes it). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The top-level values of a multiLine file: an array's elements, else the one value; with their
 * lines. An object is read up to its closing brace and what follows it is ignored, as Spark's
 * parser reads the file's first JSON value only.
 */
export function topLevelValues(text: string): Array<{ text: string; line: number }> {
  const trimmed = text.trimStart();
  const lineAt = (pos: number) => {
    let l = 1;
    for (let k = 0; k < pos; k++) if (text.charCodeAt(k) === 10) l++;
    return l;
  };
  const startAt = text.length - trimmed.length;
  if (trimmed.startsWith('{')) return [{ text: trimmed.slice(0, firstValueEnd(trimmed)), line: lineAt(startAt) }];
  if (!trimmed.startsWith('[')) return trimmed.trim() === '' ? [] : [{ text: trimmed, line: lineAt(startAt) }];
  const out: Array<{ text: string; line: number }> = [];
  let depth = 0;
  let from = -1;
  let line = lineAt(startAt);
  let fromLine = line;
  for (let i = startAt; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '\n') line++;
      }
      continue;
    }
    if (depth === 1 && from < 0 && c > ' ' && c !== ',' && c !== ']') {
      from = i;
      fromLine = line;
    }
    if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
    if ((depth === 1 && c === ',') || depth === 0) {
      if (from >= 0) out.push({ text: text.slice(from, depth === 0 ? i : i).trim(), line: fromLine });
      from = -1;
      if (depth === 0) break;
    }
  }
  return out;
}

/**
 * The rows of a JSON line whose value is an array (`line` starts with `[` after blanks), or the
 * reason it is a bad record: the first element's that is.
 */
export function arrayLineRows(
  schema: Schema,
  line: string,
  singleQuotes = true,
  patterns: JsonPatterns | null = null,
): { ok: true; rows: Row[] } | { ok: false; reason: string } {
  let text = line;
  if (!isJson(text) && singleQuotes) text = strictJson(line, { singleQuotes: true, comments: false, unquotedNames: false });
  if (!isJson(text)) return parseJsonLine(schema, line, singleQuotes, patterns) as { ok: false; reason: string };
  const rows: Row[] = [];
  const elements = topLevelValues(text);
  for (let i = 0; i < elements.length; i++) {
    const r = parseJsonLine(schema, elements[i].text, false, patterns);
    if (!r.ok) return { ok: false, reason: `element ${i} of the line's array: ${r.reason}` };
    rows.push(r.row);
  }
  return { ok: true, rows };
}

/** Whether the line's value is an array: its first character after blanks is `[`. */
export function isArrayLine(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 91) return true;
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return false;
}
