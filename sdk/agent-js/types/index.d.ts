// Types of @saas-sbc/agent-sdk (the package is JavaScript with JSDoc; this file is its contract).

export type AgentStateName = 'available' | 'not_ready' | 'wrap_up' | 'offline';
export type CallPhase = 'connecting' | 'connected' | 'ended';
/** Why a consultation ended without the consulting agent asking (`consult` event). */
export type ConsultFailure = 'rejected' | 'missed';
export type ConsultEvent = { phase: 'failed'; reason: ConsultFailure; to: TransferTarget | null };
export type OfferEnd = 'accepted' | 'rejected' | 'missed' | 'caller_left' | 'answered_elsewhere' | 'cancelled';
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';
export type MediaState = 'registered' | 'unregistered' | 'connected' | 'muted' | 'held' | 'failed';

/** Web Storage shape (window.localStorage, sessionStorage, or your own). */
export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface SipCredentials {
  /** `sip_username` from POST /api/agents/:id/sip-credentials */
  username: string;
  password: string;
  /** SIP domain; default: the account's subdomain */
  domain?: string;
  /** default: wss://<host name>:7443 */
  wsUrl?: string;
}

export interface MediaOptions {
  mediaConstraints?: MediaStreamConstraints;
  pcConfig?: RTCConfiguration;
  /** Where the caller's audio plays; default: a new Audio element; false: none */
  remoteAudio?: HTMLAudioElement | false;
  debug?: boolean;
}

export interface AgentOptions {
  /** The tenant's host name (and port): `acme.example.com` */
  host: string;
  /** https/wss (default: the page's protocol, or true outside a browser) */
  secure?: boolean;
  /** Default: localStorage in browsers, memory elsewhere */
  storage?: TokenStorage;
  /** Key of the agent token (default `agent_auth_token`; the admin token stays under `admin_auth_token`) */
  tokenKey?: string;
  fetch?: typeof fetch;
  /** WebSocket constructor (default: the global one; `ws` in node) */
  WebSocket?: any;
  /** The WebRTC leg: on by default where RTCPeerConnection exists; false for channel only */
  media?: boolean | MediaOptions;
  /** Credentials of the media leg when the channel does not send them */
  sip?: SipCredentials;
  /** The JsSIP module (default: the bundled dependency) */
  JsSIP?: any;
  /** Channel reconnect backoff (default 500 ms doubling to 15 s, with jitter) */
  backoff?: { initialMs: number; maxMs: number; factor: number };
  /** How long a command waits for its ack (default 10 s) */
  commandTimeoutMs?: number;
}

export declare const ErrorCodes: Readonly<{
  BAD_CREDENTIALS: 'bad_credentials';
  TOO_MANY_ATTEMPTS: 'too_many_login_attempts';
  MFA_REQUIRED: 'mfa_required';
  INVALID_MFA_CODE: 'invalid_mfa_code';
  MFA_CODE_REUSED: 'mfa_code_reused';
  MFA_CHALLENGE_EXPIRED: 'mfa_challenge_expired';
  INVALID_MFA_CHALLENGE: 'invalid_mfa_challenge';
  MFA_ENROLMENT_REQUIRED: 'mfa_enrolment_required';
  SSO_DENIED: 'sso_denied';
  SSO_STATE_INVALID: 'sso_state_invalid';
  SSO_NOT_CONFIGURED: 'sso_not_configured';
  SESSION_NOT_ALLOWED: 'session_not_allowed';
  LICENSE_MISSING: 'license_missing';
  NOT_AN_AGENT: 'not_an_agent';
  TENANT_REQUIRED: 'tenant_required';
  BAD_TOKEN: 'bad_token';
  NOT_LOGGED_IN: 'not_logged_in';
  NOT_CONNECTED: 'not_connected';
  TIMEOUT: 'timeout';
  COMMAND_FAILED: 'command_failed';
  NETWORK: 'network';
  TAKEOVER: 'takeover';
  MICROPHONE_DENIED: 'microphone_denied';
  MEDIA_FAILED: 'media_failed';
  REGISTRATION_FAILED: 'registration_failed';
  NO_CALL: 'no_call';
  SERVER_ERROR: 'server_error';
}>;

export declare class AgentError extends Error {
  constructor(code: string, message: string, extra?: { status?: number; details?: unknown; cause?: unknown });
  /** One of ErrorCodes, or a server code passed through (e.g. `no_offer`, `validation_failed`) */
  code: string;
  status?: number;
  details?: unknown;
  retryAfterSeconds?: number;
  /**
   * On `mfa_required` from `login()`: send the agent's TOTP (or recovery) code. Resolves like
   * `login()`; rejects with the refusal (`invalid_mfa_code`, `mfa_code_reused`,
   * `too_many_login_attempts` …) and may be called again with another code.
   */
  completeMfa?: (code: string) => Promise<Grant>;
}

// Not exported (src/index.js does not export it): the shape the SDK's classes share.
declare class Emitter<Events extends Record<string, (...args: any[]) => void>> {
  on<E extends keyof Events>(event: E, handler: Events[E]): this;
  once<E extends keyof Events>(event: E, handler: Events[E]): this;
  off<E extends keyof Events>(event: E, handler?: Events[E]): this;
}

export type TransferTarget =
  | { type: 'agent'; agentId: string }
  | { type: 'queue'; name: string }
  | { type: 'number'; number: string; callerId?: string }
  | { type: 'sip'; uri: string };

export interface Ack { type: 'ack'; id: string; ok: true; [field: string]: unknown }

export declare class Offer extends Emitter<{ ended: (e: { reason: OfferEnd; cause?: string | null }) => void }> {
  /** The agent makes offers from the channel's `offer` messages; a page receives them (`offer` event). */
  private constructor();
  readonly id: string;
  /** `queue`: a queued caller; `consult`: another agent consults this one (attended transfer) */
  readonly kind: 'queue' | 'consult';
  readonly queue: string | null;
  readonly from: string | null;
  /** the number the caller dialled (kind `consult`) */
  readonly to: string | null;
  /** the consulting agent (kind `consult`) */
  readonly fromAgentId: string | null;
  readonly timeoutSeconds: number | null;
  readonly receivedAt: number;
  readonly state: 'ringing' | 'accepting' | OfferEnd;
  readonly pending: boolean;
  accept(): Promise<Call>;
  /** A queue offer: `agent.reject` (not a miss). A consultation (while it rings): withdrawn `rejected`, the consulting agent has its caller back. */
  reject(): Promise<Ack>;
}

/** A campaign contact as a preview offer shows it (docs/agents.md "offer" of kind preview). */
export interface PreviewContact {
  readonly id: string;
  readonly name: string | null;
  /** E.164 with the leading + */
  readonly phoneNumber: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** attempts so far, this offer's included */
  readonly attempts: number;
}

export type PreviewEnd = 'accepted' | 'skipped' | 'timeout' | 'campaign_not_running' | 'cancelled';

export declare class PreviewOffer extends Emitter<{ ended: (e: { reason: PreviewEnd }) => void }> {
  /** The agent makes preview offers from the channel's `offer` messages of kind `preview` (`preview` event). */
  private constructor();
  readonly id: string;
  readonly kind: 'preview';
  readonly campaignId: string | null;
  readonly contact: PreviewContact;
  readonly timeoutSeconds: number | null;
  readonly receivedAt: number;
  /** The customer's call id once accepted. */
  readonly callId: string | null;
  readonly state: 'offered' | 'answering' | PreviewEnd;
  readonly pending: boolean;
  /** Dial this contact for this agent; the ack carries `callId`. */
  accept(): Promise<Ack>;
  /** Give the contact back to the campaign; the next one is offered. */
  skip(): Promise<Ack>;
}

export declare class Call extends Emitter<{
  phase: (e: { phase: CallPhase; cause?: string }) => void;
  /** This agent's consultation failed (rejected by the consulted agent, or missed): the caller is back. */
  consult: (e: ConsultEvent) => void;
}> {
  /** The agent makes calls (`offer.accept()`, the `call` event); a page does not. */
  private constructor();
  readonly id: string;
  readonly offer: Offer | null;
  readonly phase: 'new' | CallPhase;
  readonly cause: string | null;
  readonly held: boolean;
  readonly muted: boolean;
  readonly disposition: string | null;
  readonly connectedAt: number | null;
  readonly endedAt: number | null;
  readonly active: boolean;
  hangup(): Promise<Ack | { ok: true; local: true }>;
  hold(): Promise<Ack>;
  unhold(): Promise<Ack>;
  mute(): Promise<Ack | { ok: true; local: true }>;
  unmute(): Promise<Ack | { ok: true; local: true }>;
  sendDtmf(digits: string): Promise<Ack>;
  /** On a campaign call, also recorded (with `note`) on the contact it dialled; the ack then has `campaignId`, `contactId`. */
  setDisposition(code: string, note?: string): Promise<Ack>;
  /** Blind transfer (docs/agents.md "Transfers"); the call then ends with cause `transferred`. */
  transfer(target: TransferTarget): Promise<Ack>;
  /** Attended transfer: the caller holds while this agent talks to `target` (not a queue). */
  consult(target: Exclude<TransferTarget, { type: 'queue' }>): Promise<Ack>;
  /** Attended transfer: the caller goes to the consulted party; the call then ends with cause `transferred`. */
  completeTransfer(): Promise<Ack>;
  /** Attended transfer abandoned: the consulted party is hung up, this agent has its caller again. */
  cancelConsult(): Promise<Ack>;
  /** Attended transfer: toggle between the caller and the consulted party (the other holds with music). */
  swap(): Promise<Ack>;
  /** Three-way call: add the consulted party (who has answered) to a call with the caller. */
  conference(): Promise<Ack>;
  /** Three-way call: this agent leaves; the caller and the other party stay connected. */
  leave(): Promise<Ack>;
  /** Three-way call: everyone is hung up. */
  endAll(): Promise<Ack>;
  /** Where a blind or completed attended transfer sent the caller; null otherwise. */
  readonly transferredTo: TransferTarget | null;
}

export interface Grant {
  token: string;
  token_type: 'Bearer';
  expires_in: number;
  expires_at: string;
  session: 'agent' | 'admin';
  user: { id: string; username: string; role: string; permissions: string[]; agent_id: string | null };
  account: { id: string; subdomain: string; licenses: string[] };
}

/** `agent.ssoOptions()`: the tenant's single sign-on as the login page offers it. */
export type SsoOptions =
  | { enabled: true; displayName: string | null; startUrl: string }
  | { enabled: false; displayName: null; startUrl: null };

export type AgentEvents = {
  connection: (e: { state: ConnectionState; agentId?: string; sessionId?: string; resumed?: boolean; attempt?: number; delayMs?: number; reason?: string }) => void;
  state: (e: { state: AgentStateName; reason: string | null; changedAt: string | null; previousState: AgentStateName | null }) => void;
  offer: (offer: Offer) => void;
  preview: (preview: PreviewOffer) => void;
  call: (e: { phase: CallPhase; callId: string; cause?: string; call: Call }) => void;
  consult: (e: ConsultEvent & { callId: string; call: Call | null }) => void;
  media: (e: { state: MediaState; callId?: string | null; source: 'server' | 'local'; stream?: MediaStream | null }) => void;
  supervisor: (e: { event: string; active: boolean; mode: 'listen' | 'whisper' | 'barge' | null; supervisorId: string | null; callId: string | null; at: string }) => void;
  takeover: (e: Record<string, never>) => void;
  error: (error: AgentError) => void;
};

export declare class Agent extends Emitter<AgentEvents> {
  /** The same as createAgent(options). */
  constructor(options: AgentOptions);
  readonly host: string;
  readonly agentId: string | null;
  readonly sessionId: string | null;
  readonly connection: 'idle' | ConnectionState;
  readonly state: { state: AgentStateName; reason: string | null; changedAt: string | null } | null;
  readonly offer: Offer | null;
  readonly preview: PreviewOffer | null;
  readonly call: Call | null;
  readonly lastCall: Call | null;
  readonly token: string | null;
  /** Rejects with `mfa_required` (and `completeMfa`) when the user has a second factor. */
  login(username: string, password: string): Promise<Grant>;
  /** `GET /auth/sso`; `startUrl` starts an agent sign-in that returns to `redirectPath`. */
  ssoOptions(options?: { redirectPath?: string }): Promise<SsoOptions>;
  /** On the redirect page: `location.href` (or its search), or `{code, state}`. */
  loginWithSso(callback: string | { code: string; state: string }): Promise<Grant>;
  /** Without a token: the admin UI's token from storage (`admin_auth_token`) */
  exchange(adminToken?: string): Promise<Grant>;
  restore(): Promise<boolean>;
  refresh(): Promise<Grant>;
  connect(): Promise<void>;
  setState(state: AgentStateName, reason?: string): Promise<Ack | { ok: true; state: string; reason: string | null }>;
  /** On a campaign call, also recorded (with `note`) on the contact it dialled; the ack then has `campaignId`, `contactId`. */
  setDisposition(code: string, note?: string): Promise<Ack>;
  logout(): Promise<void>;
}

export declare const STATES: readonly AgentStateName[];
export declare const PHASES: readonly CallPhase[];
export declare const ADMIN_TOKEN_KEY: 'admin_auth_token';
export declare const AGENT_TOKEN_KEY: 'agent_auth_token';
export declare function memoryStorage(): TokenStorage;
export declare function isDtlsSrtp(sdp: string): boolean;
export declare function createAgent(options: AgentOptions): Agent;

// Only what is marked `export` above is exported (a declaration file exports every top-level
// declaration otherwise, and src/index.js has no Emitter).
export {};
