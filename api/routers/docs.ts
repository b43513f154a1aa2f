import { dirname, join } from 'node:path';
import type { Response } from 'express';
import { z } from 'zod';
import { html, json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';

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
 * the route registry and the integration registry) and `GET /docs` (Swagger UI on it). Both
 * public, like `/health`: the document describes the API, it holds nothing of any environment.
 */
export const docsRoutes = routeGroup({
  mount: '',
  access: 'public',
  tag: 'Operations',
  routes: [
    route({
      method: 'get',
      path: '/openapi.json',
      auth: 'none',
      operationId: 'getOpenApiDocument',
      summary: 'This document (no key)',
      responses: { 200: json(z.record(z.string(), z.unknown()), 'The OpenAPI 3.1 document'), 429: errorResponses([429], false)['429'] },
      handler({ res, openApiDocument }) {
        res.json(openApiDocument());
      },
    }),

    route({
      method: 'get',
      path: '/docs',
      auth: 'none',
      operationId: 'getApiReference',
      summary: 'The API reference page: Swagger UI on this document (no key)',
      responses: { 200: html('The page'), 429: errorResponses([429], false)['429'] },
      handler({ res }) {
        res.setHeader('Content-Security-Policy', DOCS_CSP);
        res.type('html').send(PAGE);
      },
    }),

    route({
      method: 'get',
      path: '/docs/init.js',
      auth: 'none',
      undocumented: 'a file of the reference page',
      handler({ res }) {
        assetHeaders(res, 'text/javascript; charset=utf-8');
        res.send(INIT_SCRIPT);
      },
    }),

    route({
      method: 'get',
      path: '/docs/:asset',
      auth: 'none',
      undocumented: 'swagger-ui-dist’s files, which the reference page loads',
      request: { params: z.object({ asset: z.string() }) },
      handler({ res, next, input }) {
        const { asset } = input.params();
        // A Map, not an object: `/docs/__proto__` is no asset.
        const type = ASSETS.get(asset);
        if (!type) return next();
        assetHeaders(res, type);
        res.sendFile(join(SWAGGER_UI_DIR, asset));
      },
    }),
  ],
});

/** The package's files hold nothing secret and change only with its version: unlike API answers, they may be cached. */
function assetHeaders(res: Response, type: string): void {
  res.setHeader('Cache-Control', 'public, max-age=3600');
  res.type(type);
}
