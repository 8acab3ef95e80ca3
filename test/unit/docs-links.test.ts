/**
 * Every relative link in README.md, CONTRIBUTING.md and docs/*.md points at a file of the
 * repository, and every #anchor at a heading of its target (GitHub's slugs), so a clone's reader
 * never meets a dead link. Links to other sites are left alone.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '../..');
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The markdown outside fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text
    .split(/^```.*$/m)
    .filter((_, i) => i % 2 === 0)
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8')
    .split(/^```.*$/m)
    .filter((_, i) => i % 2 === 0)
    .join('\n');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

function links(page: string): Array<{ target: string; anchor: string }> {
  const out: Array<{ target: string; anchor: string }> = [];
  for (const m of prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
    const href = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:
    const [path, anchor = ''] = href.split('#');
    out.push({ target: path === '' ? page : relative(ROOT, resolve(dirname(join(ROOT, page)), path)), anchor });
  }
  return out;
}

describe('the documentation links', () => {
  it.each(PAGES)('%s links only to files that exist, and to headings they have', (page) => {
    const broken: string[] = [];
    for (const { target, anchor } of links(page)) {
      const file = join(ROOT, target);
      if (!existsSync(file)) broken.push(`${target} (no such file)`);
      else if (anchor && target.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${target}#${anchor} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it('finds the pages it checks', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/getting-started.md', 'docs/exactly-once.md']));
    expect(links('README.md').length).toBeGreaterThan(10);
  });
});
