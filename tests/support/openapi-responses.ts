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
}

/** What an answer that does not fit the document looks like in a failure message. */
export interface ResponseMismatch {
  response: string;
  problem: string;
}

const DOCUMENT_ID = 'weft-openapi.json';

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
    const responses = (this.document.paths![op.template] as Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>)[method]
      .responses!;
    const status = String(r.status) in responses ? String(r.status) : 'default' in responses ? 'default' : null;
    if (!status) return { response: label, problem: `${op.template} documents no ${r.status} (has ${Object.keys(responses).join(', ')})` };
    if (!r.contentType?.includes('application/json')) return null;
    const content = responses[status].content ?? {};
    if (!('application/json' in content)) {
      return '*/*' in content ? null : { response: label, problem: `${op.template} ${status} documents no JSON body` };
    }
    const pointer = `#/${['paths', op.template, method, 'responses', status, 'content', 'application/json', 'schema'].map((t) => encodeURIComponent(escape(t))).join('/')}`;
    return this.validate(pointer, r.body, label, `${op.template} ${status}`);
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
