import { createHash } from 'node:crypto';
import { WeftError } from '../../common/errors';
import type { Egress } from '../../egress/egress';
import { EgressRefusedError } from '../../egress/errors';
import type { EnvironmentBranding, EnvironmentStore, LogoContentType, StoredLogo } from '../../store/environments';
import type { BrandingPatch } from '../schemas/environment';

/** The largest logo Weft takes: the Connect page shows it at 48 px high. */
export const LOGO_MAX_BYTES = 256 * 1024;
/** The whole fetch, however the server trickles its answer. */
const LOGO_FETCH_DEADLINE_MS = 15_000;

const EXTENSION: Record<LogoContentType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };
const CONTENT_TYPE_OF_EXTENSION = new Map(Object.entries(EXTENSION).map(([type, ext]) => [ext, type as LogoContentType]));

/** Where Weft serves a stored logo (api/routers/connect-page.ts): by the hash of its bytes. */
export function logoPath(logo: Pick<StoredLogo, 'sha256' | 'content_type'>): string {
  return `/connect/assets/logos/${logo.sha256}.${EXTENSION[logo.content_type]}`;
}

/** The hash and type a logo path names, or null when it names none. */
export function parseLogoFile(file: string): { sha256: string; contentType: LogoContentType } | null {
  const m = /^([0-9a-f]{64})\.(png|jpg|webp)$/.exec(file);
  const contentType = m && CONTENT_TYPE_OF_EXTENSION.get(m[2]);
  return m && contentType ? { sha256: m[1], contentType } : null;
}

/**
 * The environment's branding with the patch applied: each field given replaces that one, null
 * clears it. A new `logo_url` is fetched now, once, through the `assets` egress, checked and
 * stored; any refusal is a 400 with a stable code before anything is changed.
 */
export async function applyBrandingPatch(
  deps: { egress: { assets: Egress<'assets'> }; stores: { environments: Pick<EnvironmentStore, 'putLogo'> } },
  current: EnvironmentBranding,
  patch: BrandingPatch,
): Promise<EnvironmentBranding> {
  const next: EnvironmentBranding = { ...current };
  if (patch.app_name !== undefined) next.app_name = patch.app_name;
  if (patch.primary_color !== undefined) next.primary_color = patch.primary_color;
  if (patch.theme !== undefined) next.theme = patch.theme;
  if (patch.logo_url === null) next.logo = null;
  else if (patch.logo_url !== undefined) {
    const fetched = await fetchLogo(deps.egress.assets, patch.logo_url);
    await deps.stores.environments.putLogo(fetched.sha256, fetched.contentType, fetched.bytes);
    next.logo = { sha256: fetched.sha256, content_type: fetched.contentType, size: fetched.bytes.length, source_url: patch.logo_url, fetched_at: new Date() };
  }
  return next;
}

function refused(code: string, message: string): WeftError {
  return new WeftError(code, `branding.logo_url: ${message}`, 400);
}

/**
 * Fetches a logo: the egress policy's address rules (a private, loopback or metadata address is
 * `egress_refused`), no redirect followed, at most LOGO_MAX_BYTES (`logo_too_large`, the read
 * stops there), and a PNG, JPEG or WebP by its bytes (`logo_type_unsupported`: an SVG is a
 * document that can carry script, so it is refused like anything that is not one of those).
 */
async function fetchLogo(egress: Egress<'assets'>, url: string): Promise<{ sha256: string; contentType: LogoContentType; bytes: Buffer }> {
  egress.checkUrl(url, 'branding.logo_url');
  let res;
  try {
    res = await egress.stream(url, { headers: { accept: 'image/png, image/jpeg, image/webp' }, signal: AbortSignal.timeout(LOGO_FETCH_DEADLINE_MS) });
  } catch (err) {
    // A name that resolved to a refused address: the app's request named it, so 400 like a literal one.
    if (err instanceof EgressRefusedError) throw new EgressRefusedError(err.refusal, 400, 'branding.logo_url');
    throw refused('logo_fetch_failed', `could not fetch ${new URL(url).host}: ${(err as Error).message}.`);
  }
  const body = res.body;
  try {
    if (res.status >= 300 && res.status < 400) {
      throw refused(
        'logo_fetch_failed',
        `${new URL(url).host} answered ${res.status} (a redirect${res.headers.location ? ` to ${res.headers.location}` : ''}); redirects are not followed: give the image's own URL.`,
      );
    }
    if (res.status !== 200) throw refused('logo_fetch_failed', `${new URL(url).host} answered ${res.status}, not the image.`);
    const declared = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (declared === 'image/svg+xml') throw svgRefused();
    const length = Number(res.headers['content-length']);
    if (Number.isFinite(length) && length > LOGO_MAX_BYTES) throw tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > LOGO_MAX_BYTES) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
    const bytes = Buffer.concat(chunks);
    const contentType = imageTypeOf(bytes);
    if (!contentType) {
      if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(bytes.subarray(0, 1024).toString('utf8'))) throw svgRefused();
      throw refused('logo_type_unsupported', `the answer is not a PNG, JPEG or WebP image (declared ${declared || 'no content type'}).`);
    }
    return { sha256: createHash('sha256').update(bytes).digest('hex'), contentType, bytes };
  } catch (err) {
    if (err instanceof WeftError) throw err;
    throw refused('logo_fetch_failed', `could not read the image from ${new URL(url).host}: ${(err as Error).message}.`);
  } finally {
    body.destroy();
  }
}

function tooLarge(): WeftError {
  return refused('logo_too_large', `the image is larger than ${LOGO_MAX_BYTES / 1024} KB; use a smaller one (the Connect page shows it 48 px high).`);
}

function svgRefused(): WeftError {
  return refused('logo_type_unsupported', 'SVG logos are refused (an SVG can carry script and links); use a PNG, JPEG or WebP image.');
}

/** The image type by the file's signature, whatever the server declared. */
function imageTypeOf(bytes: Buffer): LogoContentType | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** Where Weft serves the stylesheet of a primary colour (`#rrggbb`). */
export function themeStylesheetPath(color: string): string {
  return `/connect/assets/theme/${color.replace(/^#/, '').toLowerCase()}.css`;
}

/**
 * The stylesheet of a primary colour (`rrggbb`, as its path names it), or null when the name is
 * no colour: the colour of buttons and accents, and the text on them, black or white, whichever
 * contrasts more (WCAG relative luminance).
 */
export function themeStylesheet(file: string): string | null {
  const m = /^([0-9a-f]{6})\.css$/.exec(file);
  if (!m) return null;
  const hex = m[1];
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
  const onPrimary = (1 + 0.05) / (luminance + 0.05) >= (luminance + 0.05) / 0.05 ? '#fff' : '#111';
  return `:root{--primary:#${hex};--on-primary:${onPrimary}}\n`;
}
