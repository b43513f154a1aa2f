import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * A comment may explain with a fact or point at a file in this repository (docs/providers/*.md
 * for what a provider does), never at a document a reader of the repository does not have: a
 * rule number of a product specification, a section of a notes file kept elsewhere, an issue's item.
 * Public standards cited by number and section (RFC 6749 §5.1) are fine.
 */
const repo = path.join(__dirname, '..', '..');

/** Recorded provider answers and generated output hold no comments of ours. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);
const SKIPPED_UNDER = ['tests/mocks/', 'tests/replay/histories/'];

const CITATIONS: Array<{ pattern: RegExp; what: string }> = [
  { pattern: /\bspec rule\b|\bthe spec\b|\bspec's\b|\(spec\b|\bspec §/i, what: 'the product spec' },
  { pattern: /\bdesign §|\bdesign doc\b/i, what: 'the design document' },
  { pattern: /(?<!RFC \d+ )§\s*[A-Z]?\d/, what: 'a numbered section of a document' },
  { pattern: /\(rules? \d|\brules? \d+[–-]\d+\)/i, what: 'a numbered rule' },
  { pattern: /\bissue #?\d+\b/i, what: 'an issue of the tracker' },
  { pattern: /\.\.\/shared\/|\bshared\/(spec|reference|design)|\breference\/[\w-]+\.md\b/, what: 'a file outside the repository' },
];

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const rel = path.relative(repo, full);
    if (entry.isDirectory()) {
      // Dot-folders are state (.weft), git's, or the machinery that runs CI, not the product.
      if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name) || SKIPPED_UNDER.some((u) => `${rel}/`.startsWith(u))) continue;
      yield* files(full);
    } else {
      yield full;
    }
  }
}

/** Tokens after which a `/` divides; anywhere else it starts a regular expression. */
const ENDS_EXPRESSION = new Set([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.PrivateIdentifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.RegularExpressionLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.CloseBraceToken,
  ts.SyntaxKind.PlusPlusToken,
  ts.SyntaxKind.MinusMinusToken,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.SuperKeyword,
  ts.SyntaxKind.TrueKeyword,
  ts.SyntaxKind.FalseKeyword,
  ts.SyntaxKind.NullKeyword,
]);

/**
 * The comments of a TypeScript or JavaScript file, by the compiler's scanner (never inside
 * strings, templates or regular expressions). Scanning is a tenth of the cost of parsing,
 * which matters over some 600 files; what a parse adds (which `/` starts a regular
 * expression, where a template resumes) is decided here from the tokens before.
 */
function scriptComments(text: string): Array<{ line: number; text: string }> {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const out: Array<{ line: number; text: string }> = [];
  const templateDepths: number[] = [];
  let depth = 0;
  let previous = ts.SyntaxKind.Unknown;
  let line = 1;
  let counted = 0;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      const at = scanner.getTokenStart();
      for (; counted < at; counted++) if (text.charCodeAt(counted) === 10) line++;
      out.push({ line, text: scanner.getTokenText() });
      continue;
    }
    if (kind === ts.SyntaxKind.WhitespaceTrivia || kind === ts.SyntaxKind.NewLineTrivia || kind === ts.SyntaxKind.ShebangTrivia) continue;
    if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && !ENDS_EXPRESSION.has(previous)) kind = scanner.reScanSlashToken();
    if (kind === ts.SyntaxKind.TemplateHead) templateDepths.push(depth);
    else if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (templateDepths.at(-1) === depth) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === ts.SyntaxKind.TemplateTail) templateDepths.pop();
      } else depth--;
    }
    previous = kind;
  }
  return out;
}

/** `#` comments of shell scripts, YAML and Containerfiles (a whole line, or after code). */
function hashComments(text: string): Array<{ line: number; text: string }> {
  return text.split('\n').flatMap((line, i) => {
    const at = line.search(/(^|\s)#/);
    return at === -1 ? [] : [{ line: i + 1, text: line.slice(at) }];
  });
}

function commentsOf(file: string, text: () => string): Array<{ line: number; text: string }> {
  if (/\.(ts|js|cjs|mjs)$|\.(ts|js|json)\.tmpl$/.test(file)) return scriptComments(text());
  if (/\.(sh|ya?ml)$|Containerfile$/.test(file)) return hashComments(text());
  return [];
}

/** A Markdown file named in a comment must be a file of the repository (from the root or the commenting file's folder). */
function missingMarkdown(file: string, comment: string): string[] {
  return [...comment.matchAll(/[\w./-]*[\w-]\.md\b/g)]
    .map((m) => m[0])
    .filter((ref) => !/^https?:/.test(ref) && !existsSync(path.join(repo, ref)) && !existsSync(path.join(path.dirname(file), ref)));
}

function citationsIn(file: string, text = () => readFileSync(file, 'utf8')): string[] {
  const found: string[] = [];
  for (const c of commentsOf(file, text)) {
    const where = `${path.relative(repo, file)}:${c.line}`;
    for (const { pattern, what } of CITATIONS) {
      const m = pattern.exec(c.text);
      if (m) found.push(`${where} cites ${what}: "${m[0]}"`);
    }
    for (const ref of missingMarkdown(file, c.text)) found.push(`${where} cites ${ref}, which is not in the repository`);
  }
  return found;
}

describe('comments cite only what is in the repository', () => {
  test('no comment in the code cites a document outside it', () => {
    const found = [...files(repo)].flatMap((file) => citationsIn(file));
    if (found.length) {
      throw new Error(`Say the fact, or point at a file here (docs/providers/<name>.md for provider facts):\n  ${found.join('\n  ')}`);
    }
  });

  test('the check finds each kind of citation, in comments only', () => {
    const sample = path.join(repo, 'runtime', 'sample.ts');
    const cite = (text: string) => citationsIn(sample, () => text);
    expect(cite('// Graph pages with @odata.nextLink (providers.md §B5).\nexport const a = 1;\n')).toHaveLength(2);
    expect(cite('/** Where the spec puts it, rule 5. */\nexport const b = 2;\n')).toHaveLength(1);
    expect(cite('export const c = 3; // see reference/api.md\n')).toHaveLength(2);
    expect(cite('// (issue 17 item 4)\nexport const d = 4;\n')).toHaveLength(1);
    expect(cite('// Token responses are not cached (RFC 6749 §5.1); docs/configuration.md.\nexport const e = 5;\n')).toEqual([]);
    expect(cite("export const f = 'providers.md §B5 in a string is not a comment';\nexport const g = /the spec/;\n")).toEqual([]);
    expect(cite('export const h = `// ${a / 2} (the spec, rule 5)` + `${{ x: 1 }.x}`; // fine\n')).toEqual([]);
    expect(cite('export const i = `${1}`; /* providers.md §B5 */\n')).toHaveLength(2);
  });
});
