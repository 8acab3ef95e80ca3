/**
 * The query API's types: compiles test/types/query-types.ts with tsc (its `Expect<Equal<...>>`
 * checks and `@ts-expect-error` lines), and, as a control, a copy with one `@ts-expect-error`
 * removed, which must fail on that line. The same for the functions module's types
 * (test/types/fn-types.ts, compiled with the fixture project): a copy without one
 * `@ts-expect-error` (upper of an INT column) fails on that line, for that reason. The fixtures
 * and the two controls compile in one tsc run (each run checks lib/ again: seconds of CPU), and
 * each file's errors are read apart: the fixtures' (and lib/'s) must be none.
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

/**
 * The two controls: each fixture with one `@ts-expect-error` removed, compiled in one tsc run with
 * the fixtures (a tsc run costs seconds); each file's errors are read apart.
 */
const CONTROLS = [
  { file: 'control.tmp.ts', fixture: 'query-types.ts', marker: '// @ts-expect-error a column the schema does not declare\n' },
  { file: 'fn-control.tmp.ts', fixture: 'fn-types.ts', marker: '// @ts-expect-error upper takes a STRING column, qty is an INT\n' },
] as const;
const PROJECT = join(FIXTURE_DIR, 'tsconfig.controls.tmp.json');

describe('types checked by tsc --noEmit over fixtures', () => {
  let run: Promise<{ code: number; out: string }>;
  beforeAll(() => {
    for (const c of CONTROLS) {
      const text = readFileSync(join(FIXTURE_DIR, c.fixture), 'utf8');
      expect(text).toContain(c.marker);
      writeFileSync(join(FIXTURE_DIR, c.file), text.replace(c.marker, ''));
    }
    // the fixture project (its options and its files), with the controls beside its files
    const fixtures = JSON.parse(readFileSync(join(FIXTURE_DIR, 'tsconfig.json'), 'utf8')) as { include: string[] };
    writeFileSync(PROJECT, JSON.stringify({ extends: './tsconfig.json', include: [...fixtures.include, ...CONTROLS.map((c) => c.file)] }));
    run = tsc(PROJECT);
  });
  afterAll(async () => {
    await Promise.allSettled([run]);
    for (const c of CONTROLS) rmSync(join(FIXTURE_DIR, c.file), { force: true });
    rmSync(PROJECT, { force: true });
  });
  /** The run's error lines in one file. */
  const errorsIn = (out: string, file: string) => out.split('\n').filter((l) => l.startsWith(file) || l.includes(`/${file}(`));
  /** The run's lines that are not a control's: an error line elsewhere (a fixture, lib/) and what continues it, or any other line. */
  const notControls = (out: string) => {
    let control = false;
    return out.split('\n').filter((l) => {
      if (l === '') return false;
      if (!/^\s/.test(l)) control = CONTROLS.some((c) => l.startsWith(`test/types/${c.file}(`));
      return !control;
    });
  };

  it('types rows from groupBy/agg and refuses invalid combinations at compile time', async () => {
    const c = await run;
    expect(notControls(c.out)).toEqual([]);
    expect(c.code).not.toBe(0);
    expect(errorsIn(c.out, 'control.tmp.ts').join('\n')).toMatch(/control\.tmp\.ts\(\d+,\d+\): error TS2345: Argument of type '"nope"'/);
  }, 180_000);

  it('refuses upper of an INT column at compile time (the functions module)', async () => {
    const c = await run;
    const errors = errorsIn(c.out, 'fn-control.tmp.ts').filter((l) => /error TS/.test(l));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/fn-control\.tmp\.ts\(\d+,\d+\): error TS2345: Argument of type 'Column<"INT", "qty">'/);
  }, 180_000);
});
