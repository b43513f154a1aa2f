import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fromSchema } from '@openapi-contrib/openapi-schema-to-json-schema';
import type { Options } from '@openapi-contrib/openapi-schema-to-json-schema/dist/openapi-schema-types';

/** One answer a simulator gave to a request an integration (or Weft on its behalf) made. */
export interface ProviderAnswer {
  method: string;
  /** The request path on the provider (no origin, no query). */
  path: string;
  status: number;
  body: unknown;
}

/** The operation of a provider's OpenAPI document an answer was checked against. */
export interface CheckedAnswer {
  answer: string;
  /** `GET /repos/{owner}/{repo}/pulls 200`, or null when the document has no such operation. */
  operation: string | null;
  /** Null when the body fits the document's schema, else what does not. */
  problem: string | null;
}

interface OpenApi30Response {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface OpenApi30Document {
  openapi: string;
  paths: Record<string, Record<string, { responses?: Record<string, OpenApi30Response> }>>;
  components: { schemas: Record<string, unknown>; responses?: Record<string, OpenApi30Response> };
}

const DOCUMENT_ID = 'provider-openapi.json';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * A provider's published OpenAPI 3.0 description, turned into JSON Schema to check answers
 * with Ajv. OpenAPI 3.0 schemas are not JSON Schema: `nullable: true` stands for "or null"
 * and `int32`/`int64` are formats. @openapi-contrib/openapi-schema-to-json-schema converts
 * each schema (`type: T, nullable: true` becomes `type: [T, "null"]`; see nullableComposition
 * for `nullable` without `type`), and Ajv's default draft-07 validator checks the result. Responses are found by method, path template and status; an error status the
 * operation does not list is checked against `errorSchema`, the provider's generic error
 * body, since providers document only some of the errors every route can give.
 */
export class OpenApi30Contract {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly operations: Array<{ method: string; template: string; pattern: RegExp }> = [];
  private readonly responses: Record<string, unknown> = {};

  constructor(
    private readonly document: OpenApi30Document,
    private readonly errorSchema: string,
  ) {
    if (!document.openapi.startsWith('3.0.')) throw new Error(`an OpenAPI 3.0 description is needed, this one is ${document.openapi}`);
    addFormats(this.ajv);
    const schemas = Object.fromEntries(Object.entries(document.components.schemas).map(([name, schema]) => [name, toJsonSchema(schema)]));
    for (const [template, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) {
        if (!METHODS.includes(method)) continue;
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '([^/]+)');
        this.operations.push({ method, template, pattern: new RegExp(`^${source}$`) });
        for (const [status, response] of Object.entries(item[method].responses ?? {})) {
          const schema = this.resolve(response).content?.['application/json']?.schema;
          if (schema) this.responses[`${method} ${template} ${status}`] = toJsonSchema(schema);
        }
      }
    }
    // A literal segment wins over a parameter (`/user/repos` before `/users/{username}/repos`-like templates).
    this.operations.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    this.ajv.addSchema({ components: { schemas }, responses: this.responses }, DOCUMENT_ID);
  }

  /** The document's operation for a method and path, as `METHOD /template`. */
  operation(method: string, path: string): string | null {
    const m = method.toLowerCase();
    const op = this.operations.find((o) => o.method === m && o.pattern.test(path));
    return op ? `${method.toUpperCase()} ${op.template}` : null;
  }

  check(a: ProviderAnswer): CheckedAnswer {
    const method = a.method.toLowerCase();
    const answer = `${a.method.toUpperCase()} ${a.path} → ${a.status}`;
    const op = this.operations.find((o) => o.method === method && o.pattern.test(a.path));
    if (!op) return { answer, operation: null, problem: 'the document has no such operation' };
    const operation = `${a.method.toUpperCase()} ${op.template} ${a.status}`;
    const key = `${method} ${op.template} ${a.status}`;
    const documented = this.document.paths[op.template][method].responses ?? {};
    if (key in this.responses) return { answer, operation, problem: this.validate(`#/responses/${pointerToken(key)}`, a.body) };
    if (String(a.status) in documented) {
      return { answer, operation, problem: a.body === null || a.body === '' ? null : 'the document gives this status no JSON body' };
    }
    if (a.status >= 400) return { answer, operation: `${operation} (undocumented: ${this.errorSchema})`, problem: this.validate(this.errorSchema, a.body) };
    return { answer, operation, problem: `the operation documents no ${a.status} (it has ${Object.keys(documented).join(', ')})` };
  }

  private resolve(response: OpenApi30Response): OpenApi30Response {
    const prefix = '#/components/responses/';
    return response.$ref?.startsWith(prefix) ? (this.document.components.responses?.[response.$ref.slice(prefix.length)] ?? {}) : response;
  }

  private validate(pointer: string, body: unknown): string | null {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(body)) return null;
    return (validate.errors ?? [])
      .slice(0, 8)
      .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('; ');
  }
}

type Transform = NonNullable<Options['beforeTransform']>;

/**
 * `nullable: true` beside `oneOf`/`anyOf`/`allOf` and no `type` adds nothing in OpenAPI 3.0.3,
 * and the converter drops it; descriptions use it all the same for "this object, or null"
 * (GitHub's `commit.author` is null for an e-mail no account claims), so it is kept as that.
 */
const nullableComposition: Transform = (schema) => {
  const s = schema as Record<string, unknown>;
  if (s.nullable !== true || s.type !== undefined || !(s.oneOf || s.anyOf || s.allOf)) return s;
  const { nullable: _nullable, description, ...rest } = s;
  return { description, anyOf: [rest, { type: 'null' }] };
};

function toJsonSchema(schema: unknown): unknown {
  const converted = fromSchema(schema as Record<string, unknown>, { beforeTransform: nullableComposition }) as Record<string, unknown>;
  // The converter stamps draft-04; the schemas use nothing draft-07 reads differently.
  delete converted.$schema;
  return converted;
}

/** JSON Pointer escaping of one reference token, URI-encoded for use in a `$ref`. */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'));
}
