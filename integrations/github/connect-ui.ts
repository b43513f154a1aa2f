import type { ConnectUi } from '../../runtime/types';

/**
 * How the Connect page shows GitHub (runtime/types.ts, ConnectUi): its logo, what an App
 * installation gives the app, and the OAuth App scopes in plain words
 * (https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps).
 */
export const githubConnectUi: ConnectUi = {
  logoSvg: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32"><rect width="32" height="32" rx="7" fill="#1f2328"/><path d="M9 10.5 10.5 6l4 3.2h3L21.5 6 23 10.5c1.3 1.5 2 3.3 2 5.3 0 4.8-4 8.2-9 8.2s-9-3.4-9-8.2c0-2 .7-3.8 2-5.3z" fill="#fff"/><circle cx="12.6" cy="16" r="1.4" fill="#1f2328"/><circle cx="19.4" cy="16" r="1.4" fill="#1f2328"/></svg>`,
  appAccess: [
    'Only the repositories you choose on GitHub’s next page (all of them, or a few you pick)',
    'With the permissions the app asks for, which GitHub lists before you install it',
  ],
  scopes: {
    repo: 'Read and change all your repositories, public and private: code, issues, pull requests, settings',
    'repo:status': 'Read and set the commit statuses of your repositories',
    public_repo: 'Read and change your public repositories',
    'read:user': 'Read your GitHub profile',
    'user:email': 'See your email addresses',
    user: 'Read and change your GitHub profile',
    'read:org': 'See your organizations and teams',
    workflow: 'Change the GitHub Actions workflows of your repositories',
    notifications: 'Read your notifications',
    gist: 'Create and change your gists',
    'read:repo_hook': 'See the webhooks of your repositories',
    'write:repo_hook': 'Create and change the webhooks of your repositories',
    'admin:repo_hook': 'Create, change and delete the webhooks of your repositories',
  },
};
