import { dirname, join } from 'node:path';
import { Router, type Response } from 'express';
import type { ApiDeps } from '../deps';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi/document';

/** swagger-ui-dist's files the page loads, served from the installed package (no CDN: the page works offline). */
const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Map<string, string>([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

/** Starts Swagger UI on the document; a file, not inline, so the page's CSP needs no 'unsafe-inline' script. */
const INIT_SCRIPT = `window.onload = function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, presets: [SwaggerUIBundle.presets.apis] });
};
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Weft API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Swagger UI sets `style` attributes and inline SVG/data images as it renders, and fetches
 * the document (and "Try it out" calls) from Weft itself; nothing from anywhere else.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * `GET /openapi.json` (the API's OpenAPI 3.1 document, built once, on the first request, from
 * the zod schemas and the integration registry) and `GET /docs` (Swagger UI on it). Both
 * public, like `/health`: the document describes the API, it holds nothing of any environment.
 */
export function docsRouter(deps: Pick<ApiDeps, 'registry'>): Router {
  const router = Router();
  let document: OpenApiDocument | undefined;

  router.get('/openapi.json', (_req, res) => {
    document ??= buildOpenApiDocument(deps.registry);
    res.json(document);
  });

  router.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.type('html').send(PAGE);
  });

  router.get('/docs/init.js', (_req, res) => {
    assetHeaders(res, 'text/javascript; charset=utf-8');
    res.send(INIT_SCRIPT);
  });

  router.get('/docs/:asset', (req, res, next) => {
    // A Map, not an object: `/docs/__proto__` is no asset.
    const type = ASSETS.get(req.params.asset);
    if (!type) return next();
    assetHeaders(res, type);
    res.sendFile(join(SWAGGER_UI_DIR, req.params.asset));
  });

  return router;
}

/** The package's files hold nothing secret and change only with its version: unlike API answers, they may be cached. */
function assetHeaders(res: Response, type: string): void {
  res.setHeader('Cache-Control', 'public, max-age=3600');
  res.type(type);
}
