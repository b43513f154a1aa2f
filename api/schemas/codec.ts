import { z } from 'zod';

/**
 * Temporal's remote-codec protocol (what the Temporal UI and `temporal --codec-endpoint` send
 * to `/decode` and `/encode`, and get back): Payloads in proto3 JSON, where every bytes field,
 * the data and each metadata value, is base64.
 */
const base64 = z.base64('must be base64');
const jsonPayload = z.object({
  metadata: z.record(z.string(), base64).optional(),
  data: base64.optional(),
});

export const codecBody = z.object({
  payloads: z.array(jsonPayload).max(10_000),
});

export type JsonPayload = z.infer<typeof jsonPayload>;
