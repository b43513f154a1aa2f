import type { Client, ScheduleOptionsStartWorkflowAction, WorkflowStartOptions } from '@temporalio/client';
import type * as workflows from '../workflows';

/** The workflows the workers register (workflows/index.ts), by the name Temporal knows them by. */
type Workflows = typeof workflows;
export type WorkflowName = keyof Workflows;

/**
 * Starts a workflow by its registered name, with its arguments checked by the compiler
 * against that workflow's signature. By name, not by function: this layer and the API
 * import workflow code as types only, so the name is tied to the function's type instead.
 */
export function startWorkflow<N extends WorkflowName>(client: Pick<Client, 'workflow'>, name: N, options: WorkflowStartOptions<Workflows[N]>) {
  return client.workflow.start<Workflows[N]>(name, options);
}

/** A schedule's action, the workflow it starts checked the same way. */
export function scheduledWorkflowAction<N extends WorkflowName>(
  name: N,
  action: Omit<ScheduleOptionsStartWorkflowAction<Workflows[N]>, 'type' | 'workflowType'>,
): ScheduleOptionsStartWorkflowAction<Workflows[N]> {
  return { type: 'startWorkflow', workflowType: name, ...action };
}
