import type { IntegrationDefinition } from '../../runtime/types';
import { oneDriveProvider } from './provider';
import { oneDriveConnectUi } from './connect-ui';
import { userFiles } from './syncs/user-files';
import { selectedFiles } from './syncs/selected-files';
import { listDrivesAction } from './actions/list-drives';
import { fetchFileAction } from './actions/fetch-file';
import { teamSiteTokenAction } from './actions/team-site-token';
import { uploadFileAction } from './actions/upload-file';
import { createFolderAction } from './actions/create-folder';
import { oneDriveSubscriptions } from './webhooks';

export const oneDrive: IntegrationDefinition = {
  provider: oneDriveProvider,
  syncs: [userFiles, selectedFiles],
  actions: [listDrivesAction, fetchFileAction, teamSiteTokenAction, uploadFileAction, createFolderAction],
  subscriptions: oneDriveSubscriptions,
  connectUi: oneDriveConnectUi,
};
