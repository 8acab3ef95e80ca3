/**
 * How the S3 sinks name a batch's objects and encode what they hold: batch IDs zero-padded to 10
 * digits (keys list in batch order), one JSON value per line.
 */
import { createHash, type Hash } from 'node:crypto';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { outputRowOfJson } from '../../engine/output-json';
import type { Json, OutputColumnType } from '../../engine/ports';

/** `0000000042`: the batch ID as it stands in keys, checked. */
export function paddedBatchId(batchId: number): string {
  if (!Number.isSafeInteger(batchId) || batchId < 0 || batchId > 9_999_999_999) {
    throw new InvalidOptionError(`batch ID ${batchId} is not an integer from 0 to 9999999999: batch IDs count up from 0`);
  }
  return String(batchId).padStart(10, '0');
}

/** `batch-0000000042.jsonl` */
export function batchFileName(batchId: number): string {
  return `batch-${paddedBatchId(batchId)}.jsonl`;
}

/** The values as one chunk, for putLinesOnce (prefix.ts). */
export async function* once<T>(value: T): AsyncGenerator<T> {
  yield value;
}

/**
 * The values of JSON-lines text (empty lines skipped); `where` names the object in the error about
 * a line that is not JSON. With output column types, each line is read as the output row it was
 * written from (outputRowOfJson: a DECIMAL back to its text with its scale).
 */
export function fromJsonLines(text: string, where: string, types?: Readonly<Record<string, OutputColumnType>>): Json[] {
  const out: Json[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let nl = text.indexOf('\n', start);
    if (nl === -1) nl = text.length;
    lineNo++;
    if (nl > start) {
      const line = text.slice(start, nl);
      try {
        out.push(types ? outputRowOfJson(line, types) : (JSON.parse(line) as Json));
      } catch (e) {
        throw new SluiceError(
          `${where} line ${lineNo} is not JSON (${(e as Error).message}): the object was not written by sluice or is damaged, so restore it or replay its batch`,
          { cause: e },
        );
      }
    }
    start = nl + 1;
  }
  return out;
}

const MASK_64 = (1n << 64n) - 1n;

/**
 * An order-independent digest of JSON-lines text, built a line at a time (never the text as one
 * string): the number of non-empty lines, their bytes, and the sum mod 2^64 of the first 64 bits
 * of each line's SHA-256. Two texts with the same lines in any order have the same digest; texts
 * with other lines differ but with a chance of 2^-64 per pair: compared without holding either text.
 */
export class LinesDigest {
  lines = 0;
  bytes = 0;
  private sum = 0n;
  /** The line read so far by addText (bytes since the last newline). */
  private open: Hash | null = null;
  private openBytes = 0;

  /** One whole line (its UTF-8 bytes, without the newline); an empty line is skipped (readers skip them too). */
  addLine(line: Uint8Array): void {
    if (line.byteLength === 0) return;
    this.take(createHash('sha256').update(line), line.byteLength);
  }

  /** The next bytes of a text (lines cut at 0x0A, which never occurs inside a UTF-8 sequence), in order; `end()` after the last. */
  addText(bytes: Uint8Array): void {
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(10, start);
      const stop = nl === -1 ? bytes.byteLength : nl;
      if (stop > start) {
        this.open ??= createHash('sha256');
        this.open.update(bytes.subarray(start, stop));
        this.openBytes += stop - start;
      }
      if (nl === -1) return;
      this.closeLine();
      start = nl + 1;
    }
  }

  /** Ends a text given to addText (its last line may lack a newline). */
  end(): this {
    this.closeLine();
    return this;
  }

  equals(other: LinesDigest): boolean {
    return this.lines === other.lines && this.bytes === other.bytes && this.sum === other.sum;
  }

  /** For errors: lines and bytes. */
  describe(): string {
    return `${this.lines} lines, ${this.bytes} bytes`;
  }

  private closeLine(): void {
    if (this.open && this.openBytes > 0) this.take(this.open, this.openBytes);
    this.open = null;
    this.openBytes = 0;
  }

  private take(hash: Hash, bytes: number): void {
    this.lines++;
    this.bytes += bytes;
    this.sum = (this.sum + hash.digest().readBigUInt64BE(0)) & MASK_64;
  }
}
