import type { IntegrationDefinition } from '../runtime/types';
import { github } from './github';
import { luma } from './luma';
import { oneDrive } from './one-drive';

/** The pre-built integrations. Adding one means adding its folder and a line here. */
export const integrations: IntegrationDefinition[] = [oneDrive, github, luma];
