/** Calling Nango's Node SDK in tests: its answers, and Weft's refusals as status and code. */

/** The SDK's HTTP failures are axios errors (axios is the SDK's dependency, not Weft's: recognised by shape). */
interface HttpError {
  isAxiosError: true;
  config?: { method?: string; url?: string };
  response?: { status: number; data: unknown };
}
function isAxiosError(err: unknown): err is HttpError {
  return typeof err === 'object' && err !== null && (err as { isAxiosError?: unknown }).isAxiosError === true;
}

/** The SDK's answer; a failed call shows Weft's status and error body instead of axios' long error. */
export async function sdk<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (isAxiosError(err))
      throw new Error(`${err.config?.method?.toUpperCase()} ${err.config?.url}: ${err.response?.status} ${JSON.stringify(err.response?.data)}`);
    throw err;
  }
}

/** A call the test expects Weft to refuse: its HTTP status and error code. */
export async function sdkError(call: Promise<unknown>): Promise<[number | undefined, string | undefined]> {
  try {
    await call;
  } catch (err) {
    if (isAxiosError(err)) return [err.response?.status, (err.response?.data as { error?: { code?: string } } | undefined)?.error?.code];
    throw err;
  }
  throw new Error('the call was expected to be refused, and succeeded');
}
