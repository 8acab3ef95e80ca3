/**
 * How the S3 sinks name a batch's objects and encode what they hold: batch IDs zero-padded to 10
 * digits (keys list in batch order), one JSON value per line.
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { Json } from '../../engine/ports';

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

/** One JSON value per line, each line ended by "\n"; '' for none. */
export function toJsonLines(values: readonly unknown[]): string {
  if (values.length === 0) return '';
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) parts[i] = JSON.stringify(values[i]);
  return `${parts.join('\n')}\n`;
}

/** The values of JSON-lines text (empty lines skipped); `where` names the object in the error about a line that is not JSON. */
export function fromJsonLines(text: string, where: string): Json[] {
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
        out.push(JSON.parse(line) as Json);
      } catch (e) {
        throw new SluiceError(`${where} line ${lineNo} is not JSON (${(e as Error).message}): the object was not written by sluice or is damaged, so restore it or replay its batch`, { cause: e });
      }
    }
    start = nl + 1;
  }
  return out;
}

/** Whether two JSON-lines texts hold the same lines in any order (a replay may emit its rows in another order). */
export function sameLines(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  const sorted = (text: string) => text.split('\n').filter((l) => l !== '').sort();
  const x = sorted(a);
  const y = sorted(b);
  return x.length === y.length && x.every((line, i) => line === y[i]);
}
