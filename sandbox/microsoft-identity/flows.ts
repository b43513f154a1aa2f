/**
 * Pending interactive requests: an authorize (or admin consent) request waiting for the
 * user to sign in and consent. The pages carry only the flow's opaque id (hidden field
 * `flowToken`); everything else stays here, so a page cannot be edited to change the
 * client, the redirect URI or the scopes. A flow ends when it redirects back to the app.
 */
import type { AppRecord } from './directory';
import type { ParsedScopes, GrantScope } from './scopes';
import { randomCredential } from './tokens';

/** Abandoned sign-ins stop working after an hour. */
const FLOW_TTL_MS = 3_600_000;

export type ResponseMode = 'query' | 'fragment' | 'form_post';
export type Prompt = 'login' | 'none' | 'consent' | 'select_account';
/** The page the user is on, so a form can only do what its page offers. */
export type FlowStage = 'login' | 'consent' | 'admin-approval';

/** Where and how the answer goes back to the app. */
export interface RedirectTarget {
  redirectUri: string;
  responseMode: ResponseMode;
  state: string | undefined;
  /** Admin consent answers carry `admin_consent=True`. */
  adminConsent: boolean;
}

export interface Flow {
  id: string;
  kind: 'authorize' | 'adminconsent';
  /** The `{tenant}` path segment the request came in on (the forms post back to it). */
  tenantSegment: string;
  app: AppRecord;
  target: RedirectTarget;
  scopes: ParsedScopes;
  prompt: Prompt | undefined;
  loginHint: string | undefined;
  challenge: { value: string; method: 'S256' | 'plain' } | null;
  nonce: string | undefined;
  /** The signed-in user (object id) once known. */
  userId: string | undefined;
  /** A fresh sign-in is required (prompt=login / select_account, or "sign in with another account"). */
  needsLogin: boolean;
  /** The user already answered the consent page (prompt=consent asks once). */
  consentDone: boolean;
  stage: FlowStage;
  /** What the consent page asked for. */
  pendingConsent: GrantScope[];
  createdAt: number;
}

export class FlowStore {
  private readonly flows = new Map<string, Flow>();

  create(fields: Omit<Flow, 'id' | 'createdAt' | 'userId' | 'consentDone' | 'stage' | 'pendingConsent'>, now: number): Flow {
    const flow: Flow = { ...fields, id: randomCredential('', 32), createdAt: now, userId: undefined, consentDone: false, stage: 'login', pendingConsent: [] };
    this.flows.set(flow.id, flow);
    return flow;
  }

  get(id: string | undefined, now: number): Flow | undefined {
    if (!id) return undefined;
    const flow = this.flows.get(id);
    if (flow && now - flow.createdAt >= FLOW_TTL_MS) {
      this.flows.delete(id);
      return undefined;
    }
    return flow;
  }

  end(id: string): void {
    this.flows.delete(id);
  }

  get size(): number {
    return this.flows.size;
  }
}
