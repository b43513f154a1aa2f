/** What the actionRun workflow carries: ids and the (small, validated) input. */
export interface ActionRunInput {
  environment: string;
  /** ConnectionDoc._id */
  connection: string;
  connectionId: string;
  providerConfigKey: string;
  provider: string;
  actionName: string;
  input: unknown;
  /** Extra attempts after a failure (the app's `X-Max-Retries`, 0–5). */
  maxRetries: number;
  /** The action workers' task queue (WEFT_ACTION_TASK_QUEUE), where the action's activity runs. */
  activityTaskQueue: string;
}
