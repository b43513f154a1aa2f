/**
 * The docs stay walkable: the README is the front door (at most 250 lines, everything else in
 * docs/), and every relative link of the README, CONTRIBUTING.md and docs/ reaches a file of
 * the repository, and a heading of it when the link names one. A moved guide or a renamed
 * heading fails here instead of leaving a reader at a dead link. No network: links to other
 * sites are not followed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import MarkdownIt from 'markdown-it';
import GithubSlugger from 'github-slugger';

const ROOT = resolve(__dirname, '../..');
const README_MAX_LINES = 250;

const markdown = new MarkdownIt({ html: true });

/** README.md, CONTRIBUTING.md and every Markdown file under docs/, relative to the root. */
function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return ['README.md', 'CONTRIBUTING.md', ...docs].sort();
}

interface Parsed {
  links: string[];
  anchors: Set<string>;
}

const parsed = new Map<string, Parsed>();

/** A file's link targets and the anchors of its headings, as GitHub renders them. */
function parse(file: string): Parsed {
  const cached = parsed.get(file);
  if (cached) return cached;
  const tokens = markdown.parse(readFileSync(join(ROOT, file), 'utf8'), {});
  const slugger = new GithubSlugger();
  const links: string[] = [];
  const anchors = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type === 'heading_open') {
      const text = (tokens[i + 1].children ?? []).filter((c) => c.type === 'text' || c.type === 'code_inline').map((c) => c.content);
      anchors.add(slugger.slug(text.join('')));
    }
    for (const child of token.children ?? []) {
      if (child.type === 'link_open') links.push(child.attrGet('href') ?? '');
    }
  });
  const result = { links, anchors };
  parsed.set(file, result);
  return result;
}

/** What is wrong with one relative link of `file`, or null. */
function brokenLink(file: string, href: string): string | null {
  const [pathPart, anchor] = href.split('#', 2) as [string, string | undefined];
  const target = pathPart === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(pathPart));
  const inRepo = relative(ROOT, target);
  if (inRepo.startsWith(`..${sep}`) || inRepo === '..') return `${href}: points outside the repository`;
  if (!existsSync(target)) return `${href}: ${inRepo} does not exist`;
  if (anchor === undefined) return null;
  if (statSync(target).isDirectory() || !target.endsWith('.md')) return `${href}: an anchor into something that is not a Markdown file`;
  const targetFile = relative(ROOT, target);
  return parse(targetFile).anchors.has(anchor) ? null : `${href}: ${targetFile} has no heading #${anchor}`;
}

const isExternal = (href: string) => /^[a-z][a-z0-9+.-]*:/i.test(href);

describe('the docs', () => {
  test(`the README is the front door: at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  test('the guides the README sends readers to are there and linked', () => {
    const readmeLinks = new Set(parse('README.md').links);
    for (const guide of [
      'connecting-users',
      'syncs-and-records',
      'actions-and-writes',
      'proxy',
      'webhooks',
      'operating',
      'deploying',
      'integrations',
      'configuration',
      'api-reference',
      'benchmarks',
    ]) {
      expect(readmeLinks).toContain(`docs/${guide}.md`);
    }
    expect(readmeLinks).toContain('CONTRIBUTING.md');
  });

  test.each(docFiles())('every relative link of %s reaches a file and heading of the repository', (file) => {
    const problems = parse(file)
      .links.filter((href) => !isExternal(href))
      .map((href) => brokenLink(file, href))
      .filter((p): p is string => p !== null);
    expect(problems).toEqual([]);
  });

  // The checker itself: a dead link, a dead anchor and a way out of the repository are caught.
  test('a broken link is reported', () => {
    expect(brokenLink('README.md', 'docs/no-such-guide.md')).toMatch(/does not exist/);
    expect(brokenLink('README.md', 'CONTRIBUTING.md#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink('docs/proxy.md', '../../shared/reference/providers.md')).toMatch(/outside the repository/);
    expect(brokenLink('README.md', '#demo-sync-a-simulated-luma-calendar')).toBeNull();
  });
});
