/**
 * A provider's response body as integration code sees it: JSON when it says or looks like
 * JSON (some APIs label JSON as text), else the text; an empty body is null. One rule for
 * every backing of ctx (the worker's client, the dry run's proxy transport).
 */
export function parseResponseBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return null;
  if (contentType?.includes('json') || /^[[{]/.test(text.trimStart())) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
