/** One attempt of one provider request, as the request log (`request_logs`) records it. */
export interface RequestLogEntry {
  method: string;
  url: string;
  status: number | null;
  durationMs: number;
  attempt: number;
  rateLimitWaitMs: number;
  error: string | null;
  /** The provider's id of the request (its definition's `requestIdHeader`), when it sent one. */
  providerRequestId: string | null;
}
