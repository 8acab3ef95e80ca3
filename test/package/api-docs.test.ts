/**
 * SLOW (about a minute: TypeDoc type-checks the package): `npm run docs` generates the API
 * reference from the types of the package's entry points (lib/api/*.ts, as package.json exports
 * them) with TypeDoc, and a type that an export names but the package does not export fails it
 * (typedoc.json: treatWarningsAsErrors, validation.notExported). The reference goes to docs/api/
 * (git-ignored); this test writes it to a temporary folder.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, env: { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1' }, timeout: 5 * 60_000, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

/** The package's entry points, from package.json's exports: "./cdk" -> lib/api/cdk.ts. */
function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types?: string }> };
  const entries: Record<string, string> = {};
  for (const target of Object.values(pkg.exports)) {
    const m = typeof target === 'object' && target.types ? /^\.\/dist\/(lib\/api\/[a-z]+)\.d\.ts$/.exec(target.types) : null;
    if (m) entries[m[1].replace('lib/api/', '')] = `${m[1]}.ts`;
  }
  return entries;
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'sluice-docs-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run docs (slow)', () => {
  it(
    'documents every export of every entry point, without a warning',
    async () => {
      const entries = entryPoints();
      expect(Object.keys(entries).sort()).toEqual(['cdk', 'lambda', 'local', 'query']);
      const config = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[]; out: string; treatWarningsAsErrors: boolean };
      expect([...config.entryPoints].sort()).toEqual(Object.values(entries).sort());
      expect(config.out).toBe('docs/api');

      const out = join(work, 'api');
      const docs = await run(NPM, ['run', 'docs', '--', '--out', out], ROOT);
      expect(docs.out).not.toMatch(/\[warning\]/);
      expect(docs.code).toBe(0);

      // Every value an entry point exports is named on its module's page and has a page of its own,
      // <entry>.<name>.html under classes/, functions/ or variables/, or modules/ for a namespace
      // (F); one exported by two entries, as createClients, gets one page, under the first, and a
      // reference from the other.
      const pages = ['classes', 'functions', 'variables', 'modules'].flatMap((d) => (existsSync(join(out, d)) ? readdirSync(join(out, d)) : []));
      for (const [entry, file] of Object.entries(entries)) {
        const values = Object.keys(require(join(ROOT, file)) as object).filter((name) => name !== '__esModule');
        expect(values.length).toBeGreaterThan(0);
        const modulePage = readFileSync(join(out, 'modules', `${entry}.html`), 'utf8');
        const missing = values.filter((name) => !modulePage.includes(`>${name}<`) || !pages.some((p) => p.endsWith(`.${name}.html`)));
        expect({ entry, missing }).toEqual({ entry, missing: [] });
        expect(values.filter((name) => pages.includes(`${entry}.${name}.html`)).length).toBeGreaterThan(0);
      }
      // The main ones by name, and types that exist only at compile time.
      for (const page of [
        'classes/cdk.AvailableNowPipeline.html',
        'functions/query.window.html',
        'interfaces/cdk.AvailableNowPipelineProps.html',
        'types/query.RowOf.html',
      ])
        expect({ page, exists: existsSync(join(out, page)) }).toEqual({ page, exists: true });
      expect(readFileSync(join(out, 'modules', 'query.html'), 'utf8')).toContain('readStream');
    },
    5 * 60_000,
  );

  it(
    "fails on a type an export names but the package does not export (the config's checks)",
    async () => {
      const config = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as Record<string, unknown>;
      // A package whose entry point names a type it does not export, as lib/api/*.ts re-export from lib/.
      writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'probe', version: '1.0.0' }));
      writeFileSync(join(work, 'hidden.ts'), 'export interface Hidden { a: number }\n');
      writeFileSync(join(work, 'entry.ts'), "import type { Hidden } from './hidden';\nexport function f(x: Hidden): number { return x.a; }\n");
      writeFileSync(
        join(work, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'commonjs', noEmit: true }, files: ['entry.ts'] }),
      );
      const probe = { ...config, entryPoints: ['entry.ts'], tsconfig: 'tsconfig.json', out: 'probe-out', intentionallyNotExported: [] };
      writeFileSync(join(work, 'typedoc.json'), JSON.stringify(probe));
      const r = await run(process.execPath, [join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--options', 'typedoc.json'], work);
      expect(r.out).toMatch(/Hidden, defined in .*hidden\.ts, is referenced by .*f\.x but not included in the documentation/);
      expect(r.code).not.toBe(0);
    },
    2 * 60_000,
  );
});
