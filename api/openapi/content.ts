import { z } from 'zod';

/** A JSON response of this schema. */
export const json = (schema: z.ZodType, description = 'OK') => ({ description, content: { 'application/json': { schema } } });

/** An HTML page (the browser routes). */
export const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });
