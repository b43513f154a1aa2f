import { z } from 'zod';
import type { SignedWebhooks } from '../../runtime/types';

/**
 * GitHub's webhook deliveries (App and OAuth App alike; docs/providers/github.md): the raw
 * body's HMAC-SHA256 with the webhook secret set on the App, hex in `X-Hub-Signature-256`
 * after `sha256=`; `X-GitHub-Delivery` is a GUID a redelivery repeats; `X-GitHub-Event` the event.
 */
export const githubWebhooks: SignedWebhooks = {
  kind: 'signed',
  signature: { header: 'x-hub-signature-256', prefix: 'sha256=', algorithm: 'sha256' },
  deliveryIdHeader: 'x-github-delivery',
  eventHeader: 'x-github-event',
  // Every App delivery names the installation it is about; OAuth App (repository or
  // organization) webhooks name none, so those are kept as unmatched.
  attribution: { kind: 'installation', bodyPath: 'installation.id', credentialField: 'installation_id' },
};

/** What a `pull_request` delivery must hold for the pull request to be saved from it (the rest is the pulls API's shape). */
export const PullRequestDelivery = z.object({
  pull_request: z
    .object({
      id: z.number(),
      number: z.number(),
      title: z.string(),
      state: z.string(),
      head: z.object({ ref: z.string() }).passthrough(),
      base: z.object({ ref: z.string() }).passthrough(),
      created_at: z.string(),
      updated_at: z.string(),
      html_url: z.string(),
    })
    .passthrough(),
  repository: z.object({ full_name: z.string() }).passthrough(),
});
