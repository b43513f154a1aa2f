export { createGitHubSimulator } from './simulator';
export type { GitHubSimulator, GitHubSimulatorStats, GitHubRequestLogEntry, GitHubPullListParams, GitHubUserInfo } from './simulator';
export { GitHubSimulatorOptionsSchema, DEFAULT_USER, DEFAULT_OAUTH_APP } from './options';
export type { GitHubSimulatorOptions, ResolvedGitHubSimulatorOptions, GitHubUserOptions, GitHubOAuthAppOptions, GitHubAppWebhook } from './options';
export type { WebhookDeliveryRecord } from '../shared/webhook-sender';
export { CODE_TTL_MS } from './oauth';
export type { ApiVersion } from './render';
export { DATA_END_MS } from './data';
export type {
  GitHubSimpleUserJson,
  GitHubRepositoryJson,
  GitHubBranchRefJson,
  GitHubLabelJson,
  GitHubPullRequestJson,
  GitHubCommitIdentityJson,
  GitHubCommitJson,
  GitHubInstallationJson,
} from './types';
