import { resolveName } from '../../lib/engine/resolve-name';

describe("resolveName: Spark's default resolver, one rule for every name", () => {
  const cols = [{ name: 'User' }, { name: 'user' }, { name: 'Amount' }];

  it('takes the item spelled exactly so before one that differs only in case', () => {
    expect(resolveName(cols, 'user')).toBe(cols[1]);
    expect(resolveName(cols, 'User')).toBe(cols[0]);
  });

  it('else the first item equal in another case', () => {
    expect(resolveName(cols, 'USER')).toBe(cols[0]);
    expect(resolveName(cols, 'amount')).toBe(cols[2]);
  });

  it('gives undefined for a name nothing matches', () => {
    expect(resolveName(cols, 'country')).toBeUndefined();
    expect(resolveName([], 'user')).toBeUndefined();
  });

  it('reads the name through an accessor for items that are not columns', () => {
    const options = ['maxFilesPerTrigger', 'maxBytesPerTrigger'];
    expect(resolveName(options, 'MAXFILESPERTRIGGER', (n) => n)).toBe('maxFilesPerTrigger');
    const children = [{ element: { name: 'a_B' } }];
    expect(resolveName(children, 'A_b', (c) => c.element.name)).toBe(children[0]);
  });
});
