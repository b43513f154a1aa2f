import type { IntegrationDefinition } from '../runtime/types';
import { luma } from './luma';

/** The pre-built integrations. Adding one means adding its folder and a line here. */
export const integrations: IntegrationDefinition[] = [luma];
