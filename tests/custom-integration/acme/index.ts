import type { IntegrationDefinition } from '../../../runtime/types';
import { acmeProvider } from './provider';
import { tasks } from './syncs/tasks';

/** Loaded the way WEFT_INTEGRATIONS_DIR's integrations are: this folder's index, default export. */
const acme: IntegrationDefinition = { provider: acmeProvider, syncs: [tasks], actions: [] };
export default acme;
