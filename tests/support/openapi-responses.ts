import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from '../../api/openapi/document';

/** One answer the API gave, as a test saw it. */
export interface ObservedResponse {
  method: string;
  /** The request path, query string included. */
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
  /** The answer's headers (names lower-case); when given, the rate-limit ones are checked too. */
  headers?: Record<string, string>;
}

/** What an answer that does not fit the document looks like in a failure message. */
export interface ResponseMismatch {
  response: string;
  problem: string;
}

const DOCUMENT_ID = 'weft-openapi.json';

/** Headers the API sets that an answer may carry only where the document declares them (lower-case). */
const DECLARED_WHEN_SENT = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'retry-after'];

type DeclaredHeader = { $ref?: string; schema?: { type?: string } };

/**
 * Checks API answers against the OpenAPI document: the operation is found by method and path
 * template, the response by status (or `default`), and a JSON body is validated with Ajv
 * (JSON Schema 2020-12, the dialect of OpenAPI 3.1) against that response's schema. An answer
 * the document has no operation or status for is a mismatch too: the document must name
 * every route and status the API uses.
 */
export class OpenApiResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly operations: Array<{ method: string; template: string; pattern: RegExp }> = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema(document as object, DOCUMENT_ID);
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      for (const method of Object.keys(item ?? {})) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        // `{path}` of the proxy takes slashes; every other parameter is one segment.
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'path' ? '(.+)' : '([^/]+)'));
        this.operations.push({ method, template, pattern: new RegExp(`^${source}$`) });
      }
    }
    // A literal segment wins over a parameter (`/connections/metadata` before `/connections/{connectionId}`).
    this.operations.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /** Null when the answer fits the document, else what is wrong. */
  check(r: ObservedResponse): ResponseMismatch | null {
    const method = r.method.toLowerCase();
    const path = r.path.split('?')[0];
    const label = `${r.method} ${r.path} → ${r.status}`;
    const op = this.operations.find((o) => o.method === method && o.pattern.test(path));
    if (!op) {
      // No route: the API's own 404 (`not_found`, `unknown_operation` under /v1), in the one error shape.
      if (r.status === 404) return this.validate('#/components/schemas/Error', r.body, label, 'the error body');
      return { response: label, problem: 'no operation in the document' };
    }
    const responses = (
      this.document.paths![op.template] as Record<
        string,
        { responses?: Record<string, { content?: Record<string, unknown>; headers?: Record<string, DeclaredHeader> }> }
      >
    )[method].responses!;
    const status = String(r.status) in responses ? String(r.status) : 'default' in responses ? 'default' : null;
    if (!status) return { response: label, problem: `${op.template} documents no ${r.status} (has ${Object.keys(responses).join(', ')})` };
    // The proxy's answers carry the provider's headers as they came.
    const headerProblem = op.template.startsWith('/proxy/') ? null : this.undeclaredHeader(r.headers, responses[status].headers ?? {});
    if (headerProblem) return { response: label, problem: `${op.template} ${status}: ${headerProblem}` };
    if (!r.contentType?.includes('application/json')) return null;
    const content = responses[status].content ?? {};
    if (!('application/json' in content)) {
      return '*/*' in content ? null : { response: label, problem: `${op.template} ${status} documents no JSON body` };
    }
    const pointer = `#/${['paths', op.template, method, 'responses', status, 'content', 'application/json', 'schema'].map((t) => encodeURIComponent(escape(t))).join('/')}`;
    return this.validate(pointer, r.body, label, `${op.template} ${status}`);
  }

  /** A rate-limit header the answer has and its response does not declare (or of the wrong type), if any. */
  private undeclaredHeader(sent: Record<string, string> | undefined, declared: Record<string, DeclaredHeader>): string | null {
    if (!sent) return null;
    const byName = new Map(Object.entries(declared).map(([name, h]) => [name.toLowerCase(), this.resolveHeader(h)]));
    for (const name of DECLARED_WHEN_SENT) {
      if (!(name in sent)) continue;
      const header = byName.get(name);
      if (!header) return `header ${name} is sent but not declared`;
      if (header.schema?.type === 'integer' && !/^\d+$/.test(sent[name])) return `header ${name}: ${JSON.stringify(sent[name])} is not an integer`;
    }
    return null;
  }

  private resolveHeader(header: DeclaredHeader): DeclaredHeader {
    const prefix = '#/components/headers/';
    if (!header.$ref?.startsWith(prefix)) return header;
    return (this.document.components?.headers?.[header.$ref.slice(prefix.length)] ?? {}) as DeclaredHeader;
  }

  private validate(pointer: string, body: unknown, label: string, what: string): ResponseMismatch | null {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(body)) return null;
    const errors = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('; ');
    return { response: label, problem: `body does not fit ${what}: ${errors}` };
  }
}

/** JSON Pointer escaping of one reference token. */
function escape(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
