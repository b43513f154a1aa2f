import htm from 'htm';

/**
 * The console's markup: htm parses tagged templates into elements, and `element` below writes
 * each one as HTML with every interpolated value escaped, so data from providers, apps and end
 * users (records, tags, metadata, error messages) can never become markup. No page carries
 * script; none needs it.
 *
 * The writer is ours, not Preact's renderer: importing Preact's types pulls the DOM library's
 * global types into the whole (Node) program, where they clash with Node's fetch types.
 */
export class Markup {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Children = Markup | string | number | boolean | null | undefined | Children[];

/** Elements that have no closing tag. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

function escapeText(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function write(child: Children): string {
  if (child === null || child === undefined || child === false || child === true) return '';
  if (child instanceof Markup) return child.value;
  if (Array.isArray(child)) return child.map(write).join('');
  return escapeText(String(child));
}

/**
 * One element: attributes whose value is null, undefined or false are left out, `true` is
 * written bare. Tag and attribute names come from the templates themselves, never from data.
 */
function element(tag: string, props: Record<string, unknown> | null, ...children: Children[]): Markup {
  const attrs = Object.entries(props ?? {})
    .filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => (v === true ? ` ${k}` : ` ${k}="${escapeText(String(v))}"`))
    .join('');
  if (VOID.has(tag)) return new Markup(`<${tag}${attrs}>`);
  return new Markup(`<${tag}${attrs}>${write(children)}</${tag}>`);
}

const bound = htm.bind(element);

/** `html\`<p>${text}</p>\``: a fragment of markup (several roots are joined). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  const result = bound(strings, ...values) as Markup | Markup[];
  return Array.isArray(result) ? new Markup(write(result)) : result;
}

export function renderDocument(root: Markup): string {
  return `<!doctype html>\n${root.value}`;
}
