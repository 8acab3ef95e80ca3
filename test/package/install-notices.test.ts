/**
 * What `npm install` prints in this repository, as docs/getting-started.md ("What npm install
 * prints") and the README say: on Node.js below 22 one EBADENGINE warning, for the dev dependency
 * aws-local-stepfunctions@3.0.0, and no install-scripts notice (every dependency with an install
 * script is named in package.json's allowScripts). npm is asked with --dry-run over a copy of
 * package.json and package-lock.json: it resolves the tree from the lockfile and checks engines
 * as a real install does, without writing node_modules (a few seconds).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface Lock {
  packages: Record<string, { version?: string; hasInstallScript?: boolean; engines?: { node?: string } }>;
}

describe('npm install in this repository', () => {
  it('names every dependency that has an install script in allowScripts, so npm 11.19+ prints no install-scripts notice', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => !(name in pkg.allowScripts))).toEqual([]);
  });

  it('warns EBADENGINE for aws-local-stepfunctions@3.0.0 alone, and only on Node.js below 22', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-install-'));
    try {
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(dir, f));
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          NPM,
          ['install', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'],
          { cwd: dir, env: { ...process.env, NODE_OPTIONS: '', npm_config_update_notifier: 'false' }, timeout: 120_000, maxBuffer: 32 * 1024 * 1024 },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(`${stdout}\n${stderr}`)),
        ),
      );
      const flagged = [...out.matchAll(/EBADENGINE +package: '([^']+)'/g)].map((m) => m[1]);
      const major = Number(process.versions.node.split('.')[0]);
      expect(flagged).toEqual(major < 22 ? ['aws-local-stepfunctions@3.0.0'] : []);
      if (major < 22) expect(out).toContain("required: { node: '>=22.0.0' }");
      expect(out).not.toMatch(/install-scripts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
