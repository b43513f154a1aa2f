export { createGitHubSimulator } from './simulator';
export type { GitHubSimulator, GitHubSimulatorStats, GitHubRequestLogEntry, GitHubPullListParams, GitHubUserInfo } from './simulator';
export { GitHubSimulatorOptionsSchema, DEFAULT_USER, DEFAULT_OAUTH_APP } from './options';
export type { GitHubSimulatorOptions, ResolvedGitHubSimulatorOptions, GitHubUserOptions, GitHubOAuthAppOptions } from './options';
export { CODE_TTL_MS, SCOPE_DESCRIPTIONS } from './oauth';
export { PULL_COMMITS_CAP } from './routes';
export { OVERSIZED_COMMITS } from './store';
export { API_VERSIONS, DEFAULT_API_VERSION } from './render';
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
