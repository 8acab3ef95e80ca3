/**
 * A URI as java.net.URI parses it (`new URI(text)`: RFC 2396, with Java's documented deviations:
 * an IPv6 literal in brackets, an empty authority before a path, an empty path), which is what
 * Spark's parse_url reads its parts from. What it gives are the raw parts (escapes kept): the
 * scheme, the authority, the user info, the host, the path, the query and the fragment.
 *
 * Java's rules that matter to parse_url, all kept here:
 * - an authority is server-based (`[userinfo@]host[:port]`) when it parses as one; otherwise it
 *   is registry-based when its characters allow that, and then it has no host (`my_host`,
 *   `bücher.de`, `1.2.3`, `host:abc` and `:80` have none), or the URI is invalid;
 * - a host is a dotted name whose labels are letters, digits and inner dashes, the last one
 *   starting with a letter, or a dotted IPv4 address of four bytes, or an IPv6 literal;
 * - `%` must start an escape of two hex digits anywhere it is allowed; characters above U+0080
 *   that are neither space nor control are allowed where escapes are (not in a host);
 * - `scheme:` followed by no `/` is an opaque URI: no authority, path or query.
 *
 * `parseJavaUri` returns the parts, or the reason Java's URISyntaxException would give.
 */

export interface JavaUri {
  readonly scheme: string | null;
  readonly authority: string | null;
  readonly userInfo: string | null;
  readonly host: string | null;
  /** Null for an opaque URI (`mailto:x`); empty when a hierarchical URI has no path. */
  readonly path: string | null;
  readonly query: string | null;
  readonly fragment: string | null;
}

/** Why the text is not a URI, as java.net.URISyntaxException puts it (the reason and the index). */
export class UriSyntaxError extends Error {}

const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGIT = '0123456789';
const ALPHANUM = ALPHA + DIGIT;
const UNRESERVED = `${ALPHANUM}-_.!~*'()`;
const RESERVED = ';/?:@&=+$,[]';

/** The ASCII characters of a class as a 128-entry table; `escaped`: `%XX` and visible non-ASCII characters too. */
interface CharClass {
  readonly table: Uint8Array;
  readonly escaped: boolean;
}

function charClass(chars: string, escaped: boolean): CharClass {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return { table, escaped };
}

const URIC = charClass(RESERVED + UNRESERVED, true);
const PATH = charClass(`${UNRESERVED}:@&=+$,;/`, true);
const USERINFO = charClass(`${UNRESERVED};:&=+$,`, true);
const REG_NAME = charClass(`${UNRESERVED}$,;:@&=+`, true);
const SERVER = charClass(`${UNRESERVED};:&=+$,-.:@[]`, true);
const SERVER_PERCENT = charClass(`${UNRESERVED};:&=+$,-.:@[]%`, true);
const SCHEME = charClass(`${ALPHANUM}+-.`, false);
const ALNUM = charClass(ALPHANUM, false);
const ALNUM_DASH = charClass(`${ALPHANUM}-`, false);
const DIGITS = charClass(DIGIT, false);
const DIGITS_DOT = charClass(`${DIGIT}.`, false);
const HEX = charClass(`${DIGIT}abcdefABCDEF`, false);
const SCOPE_ID = charClass(`${ALPHANUM}_.`, false);

/** Character.isSpaceChar: Unicode's space separators (Zs, Zl, Zp). */
function isSpaceChar(c: number): boolean {
  return (
    c === 0x20 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

class Parser {
  scheme: string | null = null;
  authority: string | null = null;
  userInfo: string | null = null;
  host: string | null = null;
  path: string | null = null;
  query: string | null = null;
  fragment: string | null = null;

  constructor(private readonly s: string) {}

  private fail(reason: string, at: number): never {
    throw new UriSyntaxError(`${reason} at index ${at}: ${this.s}`);
  }

  private at(p: number, n: number, c: string): boolean {
    return p < n && this.s[p] === c;
  }

  /** The end of the run from `start` of characters in the class (a malformed `%` escape fails). */
  private scanClass(start: number, n: number, cls: CharClass): number {
    let p = start;
    while (p < n) {
      const c = this.s.charCodeAt(p);
      if (c < 128 && cls.table[c] === 1) {
        p++;
        continue;
      }
      if (!cls.escaped) break;
      if (c === 0x25) {
        if (p + 3 <= n && this.isHex(p + 1) && this.isHex(p + 2)) {
          p += 3;
          continue;
        }
        this.fail('Malformed escape pair', p);
      }
      if (c > 128 && !isSpaceChar(c) && !(c <= 0x9f)) {
        p++;
        continue;
      }
      break;
    }
    return p;
  }

  private isHex(p: number): boolean {
    const c = this.s.charCodeAt(p);
    return c < 128 && HEX.table[c] === 1;
  }

  private checkChars(start: number, end: number, cls: CharClass, what: string): void {
    const p = this.scanClass(start, end, cls);
    if (p < end) this.fail(`Illegal character in ${what}`, p);
  }

  /** The first index from `start` of a character of `stop`, or `end`; -1 when one of `err` comes first. */
  private scanStop(start: number, end: number, err: string, stop: string): number {
    for (let p = start; p < end; p++) {
      const c = this.s[p];
      if (err.includes(c)) return -1;
      if (stop.includes(c)) return p;
    }
    return end;
  }

  parse(): void {
    const s = this.s;
    const n = s.length;
    let p = this.scanStop(0, n, '/?#', ':');
    if (p >= 0 && this.at(p, n, ':')) {
      if (p === 0) this.fail('Expected scheme name', 0);
      if (!ALPHA.includes(s[0])) this.fail('Illegal character in scheme name', 0);
      this.checkChars(1, p, SCHEME, 'scheme name');
      this.scheme = s.slice(0, p);
      p++;
      if (this.at(p, n, '/')) p = this.hierarchical(p, n);
      else {
        const q = this.scanStop(p, n, '', '#');
        if (q <= p) this.fail('Expected scheme-specific part', p);
        this.checkChars(p, q, URIC, 'opaque part');
        p = q;
      }
    } else p = this.hierarchical(0, n);
    if (this.at(p, n, '#')) {
      this.checkChars(p + 1, n, URIC, 'fragment');
      this.fragment = s.slice(p + 1, n);
      p = n;
    }
    if (p < n) this.fail('Expected end of URI', p);
  }

  private hierarchical(start: number, n: number): number {
    let p = start;
    if (this.at(p, n, '/') && this.at(p + 1, n, '/')) {
      p += 2;
      const q = this.scanStop(p, n, '', '/?#');
      if (q > p) p = this.authorityPart(p, q);
      else if (q >= n) this.fail('Expected authority', p);
      // (an empty authority before a path, query or fragment is allowed)
    }
    let q = this.scanStop(p, n, '', '?#');
    this.checkChars(p, q, PATH, 'path');
    this.path = this.s.slice(p, q);
    p = q;
    if (this.at(p, n, '?')) {
      p++;
      q = this.scanStop(p, n, '', '#');
      this.checkChars(p, q, URIC, 'query');
      this.query = this.s.slice(p, q);
      p = q;
    }
    return p;
  }

  private authorityPart(start: number, n: number): number {
    const p = start;
    const bracketed = this.scanStop(p, n, '', ']') > p && this.scanStop(p, n, '', ']') < n;
    const serverChars = this.scanClass(p, n, bracketed ? SERVER_PERCENT : SERVER) === n;
    const regChars = this.scanClass(p, n, REG_NAME) === n;
    if (regChars && !serverChars) {
      this.authority = this.s.slice(p, n);
      return n;
    }
    let q = p;
    let failure: UriSyntaxError | null = null;
    if (serverChars) {
      try {
        q = this.server(p, n);
        if (q < n) this.fail('Expected end of authority', q);
        this.authority = this.s.slice(p, n);
      } catch (e) {
        if (!(e instanceof UriSyntaxError)) throw e;
        // not a server: the parts it found go, and the authority may be registry-based
        this.userInfo = null;
        this.host = null;
        failure = e;
        q = p;
      }
    }
    if (q < n) {
      if (regChars) this.authority = this.s.slice(p, n);
      else if (failure !== null) throw failure;
      else this.fail('Illegal character in authority', q);
    }
    return n;
  }

  private server(start: number, n: number): number {
    let p = start;
    let q = this.scanStop(p, n, '/?#', '@');
    if (q >= p && this.at(q, n, '@')) {
      this.checkChars(p, q, USERINFO, 'user info');
      this.userInfo = this.s.slice(p, q);
      p = q + 1;
    }
    if (this.at(p, n, '[')) {
      p++;
      q = this.scanStop(p, n, '/?#', ']');
      if (!(q > p && this.at(q, n, ']'))) this.fail('Expected closing bracket for IPv6 address', q < 0 ? p : q);
      const r = this.scanStop(p, q, '', '%');
      if (r < q) {
        this.ipv6(p, r);
        if (r + 1 === q) this.fail('scope id expected', r);
        this.checkChars(r + 1, q, SCOPE_ID, 'scope id');
      } else this.ipv6(p, q);
      this.host = this.s.slice(p - 1, q + 1);
      p = q + 1;
    } else {
      q = this.ipv4(p, n);
      if (q <= p) q = this.hostname(p, n);
      p = q;
    }
    if (this.at(p, n, ':')) {
      p++;
      q = this.scanStop(p, n, '', '/');
      if (q > p) {
        this.checkChars(p, q, DIGITS, 'port number');
        if (Number(this.s.slice(p, q)) > 2147483647) this.fail('Malformed port number', p);
        p = q;
      }
    }
    if (p < n) this.fail('Expected port number', p);
    return p;
  }

  /** The end of a dotted IPv4 address of four bytes at `start` followed by the end or `:`, else -1 (the host is then a name). */
  private ipv4(start: number, n: number): number {
    const m = this.scanClass(start, n, DIGITS_DOT);
    if (m <= start) return -1;
    let p = start;
    for (let k = 0; k < 4; k++) {
      if (k > 0) {
        if (!this.at(p, m, '.')) return -1;
        p++;
      }
      const q = this.scanClass(p, m, DIGITS);
      if (q <= p || Number(this.s.slice(p, q)) > 255) return -1;
      p = q;
    }
    if (p < m) return -1;
    if (p < n && this.s[p] !== ':') return -1;
    this.host = this.s.slice(start, p);
    return p;
  }

  private hostname(start: number, n: number): number {
    let p = start;
    let last = -1;
    do {
      let q = this.scanClass(p, n, ALNUM);
      if (q <= p) break;
      last = p;
      p = q;
      q = this.scanClass(p, n, ALNUM_DASH);
      if (q > p) {
        if (this.s[q - 1] === '-') this.fail('Illegal character in hostname', q - 1);
        p = q;
      }
      if (!this.at(p, n, '.')) break;
      p++;
    } while (p < n);
    if (p < n && !this.at(p, n, ':')) this.fail('Illegal character in hostname', p);
    if (last < 0) this.fail('Expected hostname', start);
    // the rightmost label of a dotted name starts with a letter
    if (last > start && !ALPHA.includes(this.s[last])) this.fail('Illegal character in hostname', last);
    this.host = this.s.slice(start, p);
    return p;
  }

  /** An IPv6 address (RFC 2373: eight groups of 1 to 4 hex digits, one `::`, an IPv4 tail), or a failure. */
  private ipv6(start: number, n: number): void {
    const text = this.s.slice(start, n);
    const halves = text.split('::');
    if (halves.length > 2) this.fail('Malformed IPv6 address', start);
    let bytes = 0;
    const groups = (part: string, last: boolean): void => {
      if (part === '') return;
      const items = part.split(':');
      items.forEach((g, i) => {
        if (last && i === items.length - 1 && g.includes('.')) {
          if (!/^(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])$/.test(g)) this.fail('Malformed IPv4 address', start);
          bytes += 4;
        } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) bytes += 2;
        else this.fail('Malformed IPv6 address', start);
      });
    };
    groups(halves[0], halves.length === 1);
    if (halves.length === 2) groups(halves[1], true);
    if (bytes > 16) this.fail('IPv6 address too long', start);
    if (halves.length === 1 && bytes < 16) this.fail('IPv6 address too short', start);
    if (halves.length === 2 && bytes === 16) this.fail('Malformed IPv6 address', start);
  }
}

/** The parts of `text` as java.net.URI parses it; throws UriSyntaxError where Java throws URISyntaxException. */
export function parseJavaUri(text: string): JavaUri {
  const p = new Parser(text);
  p.parse();
  return { scheme: p.scheme, authority: p.authority, userInfo: p.userInfo, host: p.host, path: p.path, query: p.query, fragment: p.fragment };
}
