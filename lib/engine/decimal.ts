/**
 * DECIMAL(p,s) values, exact. A value in a row is the canonical text of the number with exactly
 * `s` digits after the point ("12.30", "-0.05", "7" when s = 0), as FORMAT-3 outputs it: it is
 * exact, JSON holds it as it is (state, shuffle, checkpoints), equal values have equal text (so
 * grouping and joins need no normalising), and users read it as they would print it. Arithmetic
 * (sum, avg, products) works on the unscaled BigInt (12.30 at scale 2 is 1230n): JavaScript's
 * BigInt is exact at any size and needs no dependency, and the few operations Spark's decimals
 * need (add, multiply, divide with HALF_UP rounding, precision checks) are a handful of lines each,
 * which is why no decimal library is used.
 */

/** The literal forms a DECIMAL takes from text: JSON numbers, and CSV's plain decimals. */
const NUMBER = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;

/** A character outside ASCII: the fast test before javaDigits looks for other scripts' digits. */
const NON_ASCII = /[\u0080-\uffff]/;
const OTHER_DIGIT = /\p{Nd}/gu;
const IS_DIGIT = /^\p{Nd}$/u;

/**
 * The text with each decimal digit of another script as its ASCII digit, as Java's
 * BigDecimal(String) reads them (Character.isDigit, Character.digit: `٣` and `３` are 3), and so
 * Spark's CAST of a STRING to DECIMAL and its CSV reader. Only a digit in the BMP: Java reads chars,
 * and the two of a digit past U+FFFF are neither a digit.
 */
export function javaDigits(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.replace(OTHER_DIGIT, (c) => {
    if (c.length !== 1) return c;
    // Unicode's decimal digits come in runs of ten, 0 to 9: the value is the distance from the run's 0
    let zero = c.charCodeAt(0);
    while (IS_DIGIT.test(String.fromCharCode(zero - 1))) zero--;
    return String((c.charCodeAt(0) - zero) % 10);
  });
}

/** 10^n as a BigInt, cached for the scales in use. */
const POW10: bigint[] = [];
export function pow10(n: number): bigint {
  let p = POW10[n];
  if (p === undefined) POW10[n] = p = 10n ** BigInt(n);
  return p;
}

/** `num / den` rounded HALF_UP (halves away from zero), as Java's BigDecimal ROUND_HALF_UP; den > 0. */
export function divideHalfUp(num: bigint, den: bigint): bigint {
  const q = num / den;
  const r = num % den;
  if (r === 0n) return q;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= den) return num < 0n ? q - 1n : q + 1n;
  return q;
}

/**
 * The unscaled value at `scale` of a number's text (`1.005` at scale 2 is 101n: HALF_UP, as Spark's
 * JSON reader sets the scale), or null when the text is not a number.
 */
export function unscaledOfText(text: string, scale: number): bigint | null {
  const m = NUMBER.exec(text);
  if (m === null) return null;
  const [, sign, int, frac = '', exp] = m;
  if (int === '' && frac === '') return null;
  const e = exp === undefined ? 0 : Number(exp);
  // (Java's BigDecimal holds a scale that fits an int: a larger exponent is not a number)
  if (!Number.isSafeInteger(e) || Math.abs(e - frac.length) > 2147483647) return null;
  // digits × 10^(e − frac.length), moved to `scale`
  let digits = BigInt(`${int}${frac}` || '0');
  if (digits === 0n) return 0n;
  const shift = e - frac.length + scale;
  if (shift >= 0) {
    // (no DECIMAL holds 10,000 digits: too large to be any caller's value, and 10^shift is not computed)
    if (shift > 10_000) return null;
    digits *= pow10(shift);
  } else {
    // a shift past the digits' count rounds to 0 (digits / 10^-shift < 0.1): 1e-100000000 at scale 2 is 0.00
    digits = -shift > digits.toString().length ? 0n : divideHalfUp(digits, pow10(-shift));
  }
  return sign === '-' ? -digits : digits;
}

/** The canonical text of an unscaled value at `scale`: `formatDecimal(-5n, 2)` is "-0.05". */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  let digits = (neg ? -unscaled : unscaled).toString();
  if (scale === 0) return neg ? `-${digits}` : digits;
  if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits;
  const text = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return neg ? `-${text}` : text;
}

/** The unscaled value of a canonical DECIMAL value (its text without the point). */
export function unscaledOf(value: string): bigint {
  const dot = value.indexOf('.');
  return BigInt(dot < 0 ? value : value.slice(0, dot) + value.slice(dot + 1));
}

/** Whether an unscaled value has at most `precision` digits (fits DECIMAL(precision, s)). */
export function fitsPrecision(unscaled: bigint, precision: number): boolean {
  const limit = pow10(precision);
  return unscaled < limit && unscaled > -limit;
}

/**
 * A DECIMAL(p,s) value from a number's text, rounded HALF_UP to s fraction digits; null when the
 * text is not a number or needs more than p − s integer digits.
 */
export function decimalOfText(text: string, precision: number, scale: number): string | null {
  const u = unscaledOfText(text, scale);
  if (u === null || !fitsPrecision(u, precision)) return null;
  return formatDecimal(u, scale);
}

/** The unscaled value at `toScale` of an unscaled value at `fromScale` (HALF_UP when it drops digits). */
export function rescale(unscaled: bigint, fromScale: number, toScale: number): bigint {
  return toScale >= fromScale ? unscaled * pow10(toScale - fromScale) : divideHalfUp(unscaled, pow10(fromScale - toScale));
}

/** Spark's result type of sum over DECIMAL(p,s): DECIMAL(min(38, p + 10), s). */
export function sumDecimalType(precision: number, scale: number): { precision: number; scale: number } {
  return { precision: Math.min(38, precision + 10), scale };
}

/** Spark's result type of avg over DECIMAL(p,s): DECIMAL(min(38, p + 4), min(38, s + 4)). */
export function avgDecimalType(precision: number, scale: number): { precision: number; scale: number } {
  return { precision: Math.min(38, precision + 4), scale: Math.min(38, scale + 4) };
}

/** The decimal type an integer type widens to in decimal arithmetic (Spark's DecimalPrecision). */
export function integerAsDecimal(bits: 8 | 16 | 32 | 64): { precision: number; scale: number } {
  return { precision: bits === 8 ? 3 : bits === 16 ? 5 : bits === 32 ? 10 : 20, scale: 0 };
}

/**
 * java.math.BigDecimal.toString of a DECIMAL's canonical text: plain, unless its adjusted exponent
 * is below -6, then d.dddE-n (`0.0000001` is `1E-7`, zero at scale 10 is `0E-10`). It is how Spark
 * prints a DECIMAL literal's pretty name, format_string's `%s` and Jackson's to_json.
 */
export function javaDecimalText(text: string): string {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const digits = (whole + fraction).replace(/^0+(?=\d)/, '');
  const adjusted = digits.length - 1 - fraction.length;
  if (adjusted >= -6) return text;
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${negative ? '-' : ''}${mantissa}E${adjusted}`;
}

const FLOAT32 = new Float32Array(1);
const FLOAT32_BITS = new Uint32Array(FLOAT32.buffer);
/** The largest float, and the point halfway between it and 2^128 (at or past it a number is a float's Infinity). */
const FLOAT32_MAX = 2 ** 128 - 2 ** 104;
const FLOAT32_OVERFLOW = 2 ** 128 - 2 ** 103;

/**
 * The float (binary32) nearest to the number a decimal text writes, ties to even, as Java's
 * Float.parseFloat and BigDecimal.floatValue (and so Spark's FLOAT casts) give it.
 * `Math.fround(Number(text))` rounds twice, to a double and then to a float, and errs where the
 * double lands exactly halfway between two floats though the text does not:
 * 8388608.500000000000000000000000000001 is 8388609, where the double 8388608.5 ties to 8388608.
 * `text`: an optional sign, digits with an optional point, an optional exponent (what Number
 * reads); other texts (NaN, Infinity) are Math.fround(Number(text)).
 */
export function float32OfText(text: string): number {
  const d = Number(text);
  const f = Math.fround(d);
  if (f === d || !Number.isFinite(d)) return f;
  // the float on d's other side of f, and the point halfway between the two
  let other: number;
  if (f === 0) other = Math.sign(d) * 2 ** -149;
  else if (!Number.isFinite(f)) other = Math.sign(d) * FLOAT32_MAX;
  else {
    FLOAT32[0] = f;
    FLOAT32_BITS[0] += Math.abs(d) > Math.abs(f) ? 1 : -1;
    other = FLOAT32[0];
  }
  const mid = Number.isFinite(f) ? (f + other) / 2 : Math.sign(d) * FLOAT32_OVERFLOW;
  if (d !== mid) return f;
  // d is halfway: the text's exact value decides (an exact half keeps fround's tie to even)
  const m = NUMBER.exec(text.trim());
  if (m === null) return f;
  const [, , int, frac = '', exp] = m;
  const k = (exp === undefined ? 0 : Number(exp)) - frac.length; // |text| = digits × 10^k
  const digits = BigInt(`${int}${frac}` || '0');
  // |mid| × 2^150 is an integer (a float's unit is at least 2^-149), compared with digits × 10^k × 2^150
  const halfway = BigInt(Math.abs(mid) * 2 ** 150);
  const x = k >= 0 ? digits * pow10(k) * 2n ** 150n : digits * 2n ** 150n;
  const y = k >= 0 ? halfway : halfway * pow10(-k);
  if (x === y) return f;
  return x > y === Math.abs(other) > Math.abs(f) ? other : f;
}
