import { z } from 'zod';

/** A JSON response of this schema. */
export const json = (schema: z.ZodType, description = 'OK') => ({ description, content: { 'application/json': { schema } } });

/** An HTML page (the browser routes). */
export const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

/** A plain-text body (a provider's handshake echoed back). */
export const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });
