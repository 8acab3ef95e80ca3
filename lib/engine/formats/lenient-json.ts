/**
 * The lenient JSON forms Spark's reader options allow (Jackson's features), rewritten to strict
 * JSON with the newlines kept where they were (a record's line stays its own):
 *
 *     singleQuotes     'text' is a string (allowSingleQuotes, on by default in Spark)
 *     comments         /* ... *\/ and // ... are blanks (allowComments)
 *     unquotedNames    {name: 1} names a field (allowUnquotedFieldNames)
 */
export interface LenientForms {
  readonly singleQuotes: boolean;
  readonly comments: boolean;
  readonly unquotedNames: boolean;
}

const IDENT_START = /[A-Za-z_$]/;
const IDENT = /[A-Za-z0-9_$]/;

/** The text with the allowed lenient forms rewritten to strict JSON; newlines stay where they were. */
export function strictJson(text: string, o: LenientForms): string {
  let out = '';
  const stack: string[] = [];
  let last = ''; // the last significant character written
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      last = '"';
    } else if (c === "'" && o.singleQuotes) {
      let s = '';
      let j = i + 1;
      while (j < n && text[j] !== "'") {
        if (text[j] === '\\' && text[j + 1] === "'") {
          s += "'";
          j += 2;
        } else if (text[j] === '\\') {
          s += text.slice(j, j + 2);
          j += 2;
        } else {
          s += text[j] === '"' ? '\\"' : text[j];
          j++;
        }
      }
      out += `"${s}"`;
      i = j + 1;
      last = '"';
    } else if (c === '/' && o.comments && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && o.comments && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (o.unquotedNames && IDENT_START.test(c) && stack[stack.length - 1] === '{' && (last === '{' || last === ',')) {
      let j = i;
      while (j < n && IDENT.test(text[j])) j++;
      out += `"${text.slice(i, j)}"`;
      i = j;
      last = '"';
    } else {
      if (c === '{' || c === '[') stack.push(c);
      else if (c === '}' || c === ']') stack.pop();
      if (c > ' ') last = c;
      out += c;
      i++;
    }
  }
  return out;
}

/** The end of the object `text` opens (after its closing brace), or the text's length when it does not close. */
export function firstValueEnd(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Jackson's default maxNestingDepth (StreamReadConstraints, Jackson 2.15 and later). */
const MAX_NESTING = 1000;

/**
 * The text of each member's value of the JSON object `text` (valid JSON, as a parser already
 * found it), by key, the last of a key given twice: what Spark 4 keeps in a STRING column for a
 * non-string value (its exact string parsing takes the value's bytes as written).
 */
/**
 * The elements of an array's text (`[1, {"a": 2}]`) as written, trimmed, in order; empty for `[]`
 * or text that is not an array. Strings may hold brackets and commas.
 */
export function elementTexts(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '{' || c === '[') {
      if (++depth > MAX_NESTING) return [];
      if (depth === 1) {
        if (c !== '[') return [];
        from = i + 1;
      }
    } else if (c === '}' || c === ']') {
      if (--depth === 0) {
        const last = text.slice(from, i).trim();
        if (last !== '' || out.length > 0) out.push(last);
        break;
      }
    } else if (depth === 1 && c === ',') {
      out.push(text.slice(from, i).trim());
      from = i + 1;
    }
  }
  return out;
}

export function memberTexts(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const none = new Map<string, string>();
  let depth = 0;
  let key: string | null = null;
  let from = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && key === null) key = JSON.parse(text.slice(start, i + 1)) as string;
      continue;
    }
    if (depth === 1 && c === ':' && key !== null && from < 0) from = i + 1;
    else if (c === '{' || c === '[') {
      // deeper than Jackson's nesting limit (StreamReadConstraints, 1000): Spark refuses the record
      if (++depth > MAX_NESTING) return none;
    } else if (c === '}' || c === ']') {
      if (--depth === 0) {
        if (key !== null && from >= 0) out.set(key, text.slice(from, i).trim());
        break;
      }
    } else if (depth === 1 && c === ',') {
      if (key !== null && from >= 0) out.set(key, text.slice(from, i).trim());
      key = null;
      from = -1;
    }
  }
  return out;
}
