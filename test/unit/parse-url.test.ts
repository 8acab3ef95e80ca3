/**
 * parse_url and try_parse_url (text-functions.ts over java-uri.ts): the parts Spark's ParseUrl
 * reads from java.net.URI. Expectations worked out by hand from java.net.URI's documented grammar
 * (RFC 2396 with its deviations) and Spark's function docs and Hive's parse_url examples.
 */
import { compileExpression } from '../../lib/engine/expr';
import { parseJavaUri } from '../../lib/engine/expr/java-uri';
import { errorMessageOf } from '../helpers/expr-errors';

const sql = (s: string) => `'${s.replace(/'/g, "\\'")}'`;
const part = (url: string, p: string, key?: string) =>
  compileExpression(`parse_url(${sql(url)}, ${sql(p)}${key === undefined ? '' : `, ${sql(key)}`})`, []).evaluate({});
const PARTS = ['PROTOCOL', 'USERINFO', 'AUTHORITY', 'HOST', 'PATH', 'QUERY', 'REF', 'FILE'];
const parts = (url: string) => Object.fromEntries(PARTS.map((p) => [p, part(url, p)]));

describe('parse_url', () => {
  it("reads Spark's and Hive's examples", () => {
    expect(part('http://spark.apache.org/path?query=1', 'HOST')).toBe('spark.apache.org');
    expect(part('http://spark.apache.org/path?query=1', 'QUERY')).toBe('query=1');
    expect(part('http://spark.apache.org/path?query=1', 'QUERY', 'query')).toBe('1');
    expect(parts('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1')).toEqual({
      PROTOCOL: 'http',
      USERINFO: null,
      AUTHORITY: 'facebook.com',
      HOST: 'facebook.com',
      PATH: '/path1/p.php',
      QUERY: 'k1=v1&k2=v2',
      REF: 'Ref1',
      FILE: '/path1/p.php?k1=v1&k2=v2',
    });
    expect(part('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k2')).toBe('v2');
    expect(part('https://www.socs.uts.edu.au:80/MosaicDocs-old/url-primer.html?k1=tps#chapter1', 'AUTHORITY')).toBe('www.socs.uts.edu.au:80');
    expect(part('https://www.socs.uts.edu.au:80/MosaicDocs-old/url-primer.html?k1=tps#chapter1', 'HOST')).toBe('www.socs.uts.edu.au');
  });

  it('gives the raw parts: user info, escapes, an empty path or query, an IPv6 host in brackets (with its scope id)', () => {
    expect(parts('https://us%20er:pw@Host-1.example.com.:8443/a%2Fb?q=%41&r#frag%20x')).toEqual({
      PROTOCOL: 'https',
      USERINFO: 'us%20er:pw',
      AUTHORITY: 'us%20er:pw@Host-1.example.com.:8443',
      HOST: 'Host-1.example.com.',
      PATH: '/a%2Fb',
      QUERY: 'q=%41&r',
      REF: 'frag%20x',
      FILE: '/a%2Fb?q=%41&r',
    });
    expect([part('http://host', 'PATH'), part('http://host', 'FILE'), part('http://host/p?', 'QUERY'), part('http://host/p?', 'FILE')]).toEqual([
      '',
      '',
      '',
      '/p?',
    ]);
    expect([part('http://[::1]:8080/x', 'HOST'), part('http://[fe80::1%25eth0]/', 'HOST'), part('http://1.2.3.4:80/', 'HOST')]).toEqual([
      '[::1]',
      '[fe80::1%25eth0]',
      '1.2.3.4',
    ]);
  });

  it('has no host where java.net.URI finds a registry-based authority', () => {
    // an underscore, a label ending in '-', a last label starting with a digit, a bad port, no host,
    // a character beyond ASCII: not a server, but characters a registry name allows
    for (const url of [
      'http://my_host/p',
      'http://host-/p',
      'http://1.2.3/p',
      'http://256.1.1.1/p',
      'http://host:abc/p',
      'http://:80/p',
      'http://bücher.de/p',
      'http://h:99999999999/p',
    ]) {
      expect([url, part(url, 'HOST'), part(url, 'PATH')]).toEqual([url, null, '/p']);
      expect(part(url, 'AUTHORITY')).toBe(url.slice(7, -2));
    }
  });

  it('reads relative and opaque URIs as java.net.URI does', () => {
    expect(parts('/rel/path?q=1')).toMatchObject({ PROTOCOL: null, HOST: null, AUTHORITY: null, PATH: '/rel/path', QUERY: 'q=1' });
    expect(parts('mailto:someone@example.com#x')).toEqual({
      PROTOCOL: 'mailto',
      USERINFO: null,
      AUTHORITY: null,
      HOST: null,
      PATH: null,
      QUERY: null,
      REF: 'x',
      FILE: null,
    });
    expect(parts('http:///only/path')).toMatchObject({ AUTHORITY: null, HOST: null, PATH: '/only/path' });
    expect(part('', 'PATH')).toBe('');
  });

  it("takes the key as Spark does: a Java pattern, the first match's group 2, QUERY only", () => {
    expect(part('http://a/?x1=2&xy=3', 'QUERY', 'x.')).toBe('2');
    expect(part('http://a/?ab=1&b=2', 'QUERY', 'b')).toBe('2');
    expect(part('http://a/?b=&c=1', 'QUERY', 'b')).toBe('');
    expect(part('http://a/?b=1', 'QUERY', 'z')).toBeNull();
    expect(part('http://a/?b=1', 'HOST', 'b')).toBeNull();
    expect(part('http://a/', 'QUERY', 'b')).toBeNull();
  });

  it('is null for a part it does not name (they are upper case) and for null arguments', () => {
    expect(part('http://a/', 'host')).toBeNull();
    expect(part('http://a/', 'PORT')).toBeNull();
    expect(compileExpression("parse_url(NULL, 'HOST')", []).evaluate({})).toBeNull();
    expect(compileExpression("parse_url('http://a/', NULL)", []).evaluate({})).toBeNull();
  });

  it('raises INVALID_URL for what java.net.URI refuses; try_parse_url gives NULL', () => {
    for (const url of [
      'http://a b.com/',
      'http://a/%zz',
      'htttp://',
      'http:',
      '1http://x/',
      'http://a/b c',
      'http://a/#x#y',
      'http://[::1/',
      'http://[1:2]/',
    ]) {
      expect([url, errorMessageOf(`parse_url(${sql(url)}, 'HOST')`).slice(0, 13)]).toEqual([url, '[INVALID_URL]']);
      expect(compileExpression(`try_parse_url(${sql(url)}, 'HOST')`, []).evaluate({})).toBeNull();
    }
    // neither a server nor a registry name: Java reports the authority's first index
    expect(errorMessageOf("parse_url('http://a b/', 'HOST')")).toMatch(/Illegal character in authority at index 7/);
  });
});

describe('java.net.URI parse', () => {
  it('allows an empty authority before a path, and visible non-ASCII in the path, query and fragment', () => {
    expect(parseJavaUri('file:///tmp/x')).toMatchObject({ scheme: 'file', authority: null, host: null, path: '/tmp/x' });
    expect(parseJavaUri('http://h/ä?ö#ü')).toMatchObject({ host: 'h', path: '/ä', query: 'ö', fragment: 'ü' });
    // a no-break space is a space character: refused
    expect(() => parseJavaUri('http://h/a\u00a0b')).toThrow(/Illegal character in path/);
  });
});
