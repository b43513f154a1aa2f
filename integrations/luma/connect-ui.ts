import type { ConnectUi } from '../../runtime/types';

/** How the Connect page shows Luma (runtime/types.ts, ConnectUi): its logo and what an API key gives the app. */
export const lumaConnectUi: ConnectUi = {
  logoSvg: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32"><rect width="32" height="32" rx="7" fill="#131517"/><path d="M10 8h4v12.5h8V24H10z" fill="#fff"/><circle cx="23" cy="10" r="2.5" fill="#f5a524"/></svg>`,
  apiKeyAccess: ['Read and manage the events, guests and people of the Luma calendar your API key belongs to', 'Create events in that calendar'],
};
