import { z } from 'zod';
import { ActionError, isProviderStatus } from '../../../runtime/errors';
import { defineAction } from '../../../runtime/types';
import { toPullRequest } from '../mappers';
import { PullRequest, type GitHubPullRequest } from '../models';

const Input = z
  .object({
    /** `owner/name`, as the PullRequest model's `repository`. */
    repository: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'must be "owner/name"'),
    pull_number: z.number().int().positive(),
    title: z.string().trim().min(1).max(256).optional(),
    body: z.string().max(65_536).nullable().optional(),
    state: z.enum(['open', 'closed']).optional(),
  })
  .strict()
  .refine((i) => i.title !== undefined || i.body !== undefined || i.state !== undefined, { message: 'give at least one of title, body, state' });

/** GitHub's 422 body: what the app needs to see to fix its request. */
interface GitHubValidationError {
  message?: string;
  errors?: Array<{ resource?: string; field?: string; code?: string; message?: string }>;
}

/**
 * Updates a pull request's title, body or state (`PATCH /repos/{owner}/{repo}/pulls/{n}`)
 * and saves the answer to the records cache as the pull-requests sync would, so GET
 * /records shows it at once and the sync's next run finds it unchanged.
 */
export const updatePullRequestAction = defineAction<z.infer<typeof Input>, PullRequest>({
  kind: 'action',
  name: 'update-pull-request',
  description: 'Updates the title, body or state (open/closed) of a pull request; returns it as a PullRequest record.',
  endpoint: { method: 'POST', path: '/update-pull-request' },
  input: Input,
  output: PullRequest,
  async exec(ctx, input) {
    const [owner, name] = input.repository.split('/');
    const { title, body, state } = input;
    let pull: GitHubPullRequest;
    try {
      pull = (
        await ctx.patch<GitHubPullRequest>({
          endpoint: `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/pulls/${input.pull_number}`,
          data: { title, body, state },
        })
      ).data;
    } catch (err) {
      if (isProviderStatus(err, 404))
        throw new ActionError('pull_request_not_found', `${input.repository} has no pull request #${input.pull_number} visible to this connection.`, 404);
      if (isProviderStatus(err, 403))
        throw new ActionError(
          'pull_request_write_forbidden',
          `The connection may not update pull requests of ${input.repository} (GitHub: Pull requests write permission).`,
          403,
        );
      if (isProviderStatus(err, 422)) {
        const refusal = (err.providerBody ?? {}) as GitHubValidationError;
        const fields = (refusal.errors ?? []).map((e) => `${e.field ?? '?'}: ${e.message ?? e.code ?? 'invalid'}`).join('; ');
        throw new ActionError('pull_request_update_rejected', `GitHub refused the update${fields ? ` (${fields})` : ''}.`, 424, err.details);
      }
      throw err;
    }
    const record = toPullRequest(pull, input.repository);
    await ctx.batchSave([record], 'PullRequest');
    return record;
  },
});
