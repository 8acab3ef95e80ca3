/**
 * The query API's types: compiles test/types/query-types.ts with tsc (its `Expect<Equal<...>>`
 * checks and `@ts-expect-error` lines), and, as a control, a copy with one `@ts-expect-error`
 * removed, which must fail on that line. The same for the functions module's types
 * (test/types/fn-types.ts, compiled with the fixture project): a copy without one
 * `@ts-expect-error` (upper of an INT column) fails on that line, for that reason.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const FIXTURE_DIR = join(ROOT, 'test', 'types');

async function tsc(project: string): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [TSC, '-p', project], { cwd: ROOT });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

describe('query types (tsc --noEmit over a fixture)', () => {
  const control = join(FIXTURE_DIR, 'control.tmp.ts');
  const controlProject = join(FIXTURE_DIR, 'tsconfig.control.tmp.json');
  afterAll(() => {
    rmSync(control, { force: true });
    rmSync(controlProject, { force: true });
  });

  it('types rows from groupBy/agg and refuses invalid combinations at compile time', async () => {
    const text = readFileSync(join(FIXTURE_DIR, 'query-types.ts'), 'utf8');
    const marker = '// @ts-expect-error a column the schema does not declare\n';
    expect(text).toContain(marker);
    writeFileSync(control, text.replace(marker, ''));
    writeFileSync(controlProject, JSON.stringify({ extends: './tsconfig.json', include: ['control.tmp.ts'] }));
    const [fixture, withoutDirective] = await Promise.all([tsc(join(FIXTURE_DIR, 'tsconfig.json')), tsc(controlProject)]);
    expect(fixture.out).toBe('');
    expect(fixture.code).toBe(0);
    expect(withoutDirective.code).not.toBe(0);
    expect(withoutDirective.out).toMatch(/control\.tmp\.ts\(\d+,\d+\): error TS2345: Argument of type '"nope"'/);
  }, 180_000);
});

describe('functions module types (tsc --noEmit over a fixture)', () => {
  const control = join(FIXTURE_DIR, 'fn-control.tmp.ts');
  const controlProject = join(FIXTURE_DIR, 'tsconfig.fn-control.tmp.json');
  afterAll(() => {
    rmSync(control, { force: true });
    rmSync(controlProject, { force: true });
  });

  it('refuses upper of an INT column at compile time', async () => {
    const text = readFileSync(join(FIXTURE_DIR, 'fn-types.ts'), 'utf8');
    const marker = '// @ts-expect-error upper takes a STRING column, qty is an INT\n';
    expect(text).toContain(marker);
    writeFileSync(control, text.replace(marker, ''));
    writeFileSync(controlProject, JSON.stringify({ extends: './tsconfig.json', include: ['fn-control.tmp.ts'] }));
    const withoutDirective = await tsc(controlProject);
    expect(withoutDirective.code).not.toBe(0);
    expect(withoutDirective.out).toMatch(/fn-control\.tmp\.ts\(\d+,\d+\): error TS2345: Argument of type 'Column<"INT", "qty">'/);
    expect(withoutDirective.out.match(/error TS/g)).toHaveLength(1);
  }, 180_000);
});
