import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { parseSchema } from '../../lib/engine/schema';
import type { ReadResult } from '../../lib/engine/ports';

async function bytesRead(source: InMemoryFileSource): Promise<number> {
  let bytes = 0;
  for await (const c of source.readChunks(0, null, { lastKey: '\uffff' }) as AsyncIterable<ReadResult>) bytes += c.bytes;
  return bytes;
}

describe('the in-memory file source', () => {
  it("counts a text file's bytes as UTF-8 (as S3 stores it), on every read, and again when its body changes", async () => {
    const source = new InMemoryFileSource(parseSchema('name STRING'));
    const body = ['{"name":"Zoë"}', '{"name":"東京"}'].join('\n');
    source.add('a.json', body);
    // ë is 2 bytes, each of 東京 3: more bytes than characters
    expect(body.length).toBe(28);
    expect(await bytesRead(source)).toBe(33);
    expect(await bytesRead(source)).toBe(33);
    source.files[0].body = '{"name":"plain"}';
    expect(await bytesRead(source)).toBe(16);
  });
});

describe("the in-memory file source's byte count", () => {
  afterEach(() => jest.restoreAllMocks());

  it('is counted once for a file handed to several sources (a benchmark pass each), and again for a new body', async () => {
    const schema = parseSchema('name STRING');
    const file = { key: 'a.json', body: ['{"name":"Zoë"}', '{"name":"東京"}'].join('\n') };
    const counted = jest.spyOn(Buffer, 'byteLength');
    const sourceWith = () => {
      const s = new InMemoryFileSource(schema);
      s.files.push(file);
      return s;
    };
    expect(await bytesRead(sourceWith())).toBe(33);
    expect(await bytesRead(sourceWith())).toBe(33);
    expect(counted.mock.calls.filter(([text]) => text === file.body)).toHaveLength(1);
    file.body = '{"name":"plain"}';
    expect(await bytesRead(sourceWith())).toBe(16);
    expect(counted.mock.calls.filter(([text]) => text === file.body)).toHaveLength(1);
  });
});
