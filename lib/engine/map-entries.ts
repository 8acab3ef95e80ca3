/**
 * The entries of a MAP value. A map value is a plain object (it crosses JSON, worker threads and
 * the state as data), and its entries keep Spark's order, the order they were built in. A JS
 * object lists an integer-like property name ("10") before all others, in numeric order, so such
 * a key is stored with a mark in front ("\u0000" + "10"), and so is a key that begins with the mark
 * (one key text, one stored name, both ways). Every reader and builder of a map's entries goes
 * through these functions (`Object.values` and the count of keys need none); the mark is never
 * shown: the output rows (`outputValue`) hold the keys' texts.
 */
const MARK = '\u0000';

/** Whether JS may list `key` first, as an array index (digits without a leading zero, up to 10 of them: a few such are not indexes, and marking them too is harmless). */
function looksLikeIndex(key: string): boolean {
  const n = key.length;
  if (n === 0 || n > 10) return false;
  const c0 = key.charCodeAt(0);
  if (c0 < 48 || c0 > 57 || (c0 === 48 && n > 1)) return false;
  for (let i = 1; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The property name a map key's text is stored under. */
export function storedKey(key: string): string {
  return looksLikeIndex(key) || key.startsWith(MARK) ? MARK + key : key;
}

/** A map key's text from the property name it is stored under (storedKey's inverse). */
export function keyOfStored(name: string): string {
  return name.startsWith(MARK) ? name.slice(1) : name;
}

/** Sets the entry `key` (a key's text) of a map value being built, as data ("__proto__" included). */
export function setEntry(m: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(m, storedKey(key), { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The property name `key` is held under in `m`, or undefined. A map written before keys were
 * marked (in a state store or checkpoint of an earlier version) holds an integer-like key as it
 * is: it is found there too (a map built now never has that name).
 */
function nameIn(m: object, key: string): string | undefined {
  const name = storedKey(key);
  if (Object.hasOwn(m, name)) return name;
  return name !== key && Object.hasOwn(m, key) ? key : undefined;
}

/** Whether the map has the key `key` (a key's text). */
export function hasEntry(m: object, key: string): boolean {
  return nameIn(m, key) !== undefined;
}

/** The value of the key `key` (a key's text), undefined when the map has none. */
export function entryValue(m: object, key: string): unknown {
  const name = nameIn(m, key);
  return name === undefined ? undefined : (m as Record<string, unknown>)[name];
}

/** The map's keys' texts, in the map's order. */
export function mapKeys(m: object): string[] {
  const names = Object.keys(m);
  for (let i = 0; i < names.length; i++) if (names[i].startsWith(MARK)) names[i] = names[i].slice(1);
  return names;
}

/** The map's entries (key text, value), in the map's order. */
export function mapEntries(m: object): Array<[string, unknown]> {
  const entries = Object.entries(m);
  for (const e of entries) if (e[0].startsWith(MARK)) e[0] = e[0].slice(1);
  return entries;
}
