/**
 * Every `try_` function a message or a comment of the engine names is one sluice has: an error
 * that says "Use 'try_x' to tolerate ..." must not send the user to a function that is refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileExpression } from '../../lib/engine/expr';
import { parseDdlColumns } from '../../lib/engine/ddl';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const named = new Set<string>();
for (const file of sources(join(__dirname, '../../lib/engine'))) {
  for (const m of readFileSync(file, 'utf8').matchAll(/\btry_[a-z0-9_]+/g)) named.add(m[0]);
}

describe('the try_ functions the engine names', () => {
  it('are found in the source (the scan works)', () => {
    expect(named.has('try_add')).toBe(true);
    expect(named.size).toBeGreaterThan(10);
  });

  it.each([...named].sort())('%s resolves (a wrong argument count is fine: the name is known)', (name) => {
    let error = '';
    try {
      compileExpression(`${name}()`, parseDdlColumns('s STRING'));
    } catch (e) {
      error = (e as Error).message;
    }
    expect(error).not.toMatch(/UNRESOLVED_ROUTINE/);
  });
});
