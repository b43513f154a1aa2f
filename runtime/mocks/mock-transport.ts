import { relative } from 'node:path';
import { WeftError } from '../../common/errors';
import { ProviderAuthError, ProviderHttpError, ProviderRedirectError } from '../errors';
import type { HttpResponse, ProviderTransport, RequestConfig } from '../types';
import { readMockResponses, type MockResponseFile } from './fixture-files';
import { describeIdentity, identityHash, requestIdentity, type IdentityOptions } from './request-identity';

/** A request the recording does not hold: the test fails with what to record. */
class MockNotRecordedError extends WeftError {
  constructor(message: string) {
    super('mock_not_recorded', message, 500, undefined, { retryable: false });
  }
}

export interface MockTransportOptions extends IdentityOptions {
  /** The function's mock folder (`tests/mocks/<integration>/mocks/<name>`). */
  functionDir: string;
  /** The command that records what is missing, e.g. `weft dryrun user-files conn-1 --save`. */
  recordCommand: string;
}

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

/**
 * The provider as the saved mocks know it: a request is answered from the file whose hash
 * matches; failing that, from the only file with the same method and path; failing that,
 * the call fails naming what to record. Answers are returned or thrown as the worker's HTTP
 * client would (a 404 is a ProviderHttpError the integration code may catch). No socket is
 * opened.
 */
export function createMockTransport(opts: MockTransportOptions): ProviderTransport & { calls: string[] } {
  const files = readMockResponses(opts.functionDir);
  const byHash = new Map(files.map((f) => [hashOfFile(f), f]));
  const calls: string[] = [];
  // Requests answered by method and path alone. The same one again means the answer led
  // back to it (page 2 answered with page 1, whose next link is page 2): a loop, not a replay.
  const answeredByPath = new Set<string>();

  return {
    calls,
    async request<T>(config: RequestConfig): Promise<HttpResponse<T>> {
      const identity = requestIdentity(config, opts);
      const hash = identityHash(identity);
      calls.push(`${describeIdentity(identity)} (${hash})`);
      const samePath = files.filter((f) => f.request.method === identity.method && f.request.path === identity.path);
      const exact = byHash.get(hash);
      const byPath = !exact && samePath.length === 1 && !answeredByPath.has(hash) ? samePath[0] : undefined;
      if (byPath) answeredByPath.add(hash);
      const file = exact ?? byPath;
      if (!file) {
        const where = relative(process.cwd(), opts.functionDir) || opts.functionDir;
        const near =
          samePath.length > 1
            ? ` ${samePath.length} recordings have that method and path, none this hash.`
            : answeredByPath.has(hash)
              ? ' It was asked again after being answered with the only recording of its method and path (a page leading back to itself): that page was not recorded.'
              : '';
        throw new MockNotRecordedError(
          `No recorded response for ${identity.method} ${identity.path} (hash ${hash}; ${describeIdentity(identity)}) in ${where}/mocks.${near} Record it with: ${opts.recordCommand}`,
        );
      }
      return answer<T>(file, identity.method, identity.path);
    },
  };
}

/** The hash in a file's name (`GET-v1-0-me-drives-<hash>.json`); a renamed file is identified by its content. */
function hashOfFile(file: MockResponseFile & { file: string }): string {
  return /-([0-9a-f]{12})\.json$/.exec(file.file)?.[1] ?? identityHash(file.request);
}

function answer<T>(file: MockResponseFile, method: string, path: string): HttpResponse<T> {
  const { status, headers } = file.response;
  const data = file.response.bodyEncoding === 'base64' ? Buffer.from(String(file.response.body), 'base64') : file.response.body;
  if (REDIRECT_STATUS.has(status)) throw new ProviderRedirectError(status, headers, method, path, headers.location ?? '(no Location)');
  if (status === 401) throw new ProviderAuthError(401, `The provider rejected the connection's credentials (HTTP 401 on ${method} ${path})`);
  if (status >= 400) throw new ProviderHttpError(status, data, headers, method, path);
  return { status, headers: { ...headers }, data: structuredClone(data) as T };
}
