import type { ConnectUi } from '../../runtime/types';

/**
 * How the Connect page shows OneDrive (runtime/types.ts, ConnectUi): its logo and Microsoft
 * Graph's permissions in plain words (https://learn.microsoft.com/graph/permissions-reference).
 * Matched without the `https://graph.microsoft.com/` prefix.
 */
export const oneDriveConnectUi: ConnectUi = {
  logoSvg: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32"><rect width="32" height="32" rx="7" fill="#0f6cbd"/><circle cx="13" cy="16" r="5.5" fill="#fff"/><circle cx="19.5" cy="14.5" r="6.5" fill="#fff"/><rect x="7.5" y="17" width="18.5" height="6" rx="3" fill="#fff"/></svg>`,
  scopes: {
    openid: '',
    profile: 'See your basic profile (your name)',
    email: 'See your email address',
    offline_access: 'Stay connected when you are not using the app, until you disconnect it',
    'User.Read': 'Sign you in and read your profile',
    'Files.Read': 'Read your files',
    'Files.Read.All': 'Read all the files you can open: yours and those shared with you',
    'Files.ReadWrite': 'Read, create, change and delete your files',
    'Files.ReadWrite.All': 'Read, create, change and delete all the files you can open',
    'Sites.Read.All': 'Read the documents and lists of the SharePoint sites you can open',
    'Sites.ReadWrite.All': 'Read and change the documents and lists of the SharePoint sites you can open',
    '.default': 'The permissions your organization has granted this app',
  },
};
