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
  /** An async call (`X-Async: true`): its public id and status URL, announced by an `async_action` webhook when it ends. */
  asyncCall?: { id: string; statusUrl: string };
}

/** What the `async_action` webhook reports: which call ended, on which connection. */
export interface ActionCompletionInput {
  environment: string;
  /** ConnectionDoc._id */
  connection: string;
  connectionId: string;
  providerConfigKey: string;
  /** The action's workflow id: one announcement per call, however often the activity runs. */
  workflowId: string;
  asyncCall: { id: string; statusUrl: string };
}
