export { createGitHubSimulator } from './simulator';
export type { GitHubSimulator, GitHubSimulatorStats, GitHubRequestLogEntry, GitHubPullListParams } from './simulator';
export { GitHubSimulatorOptionsSchema } from './options';
export type { GitHubSimulatorOptions, ResolvedGitHubSimulatorOptions } from './options';
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
