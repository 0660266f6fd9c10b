/**
 * Stable error codes of the SDK. An application switches on `error.code`, never on the message.
 * The codes of the API's JSON error bodies (`{code, message}`) are mapped onto these where the
 * meaning is the same, so a page needs to know one list.
 */
export const ErrorCodes = Object.freeze({
  BAD_CREDENTIALS: 'bad_credentials',       // login refused (401 invalid_credentials)
  TOO_MANY_ATTEMPTS: 'too_many_login_attempts', // 429: wait `retryAfterSeconds`
  MFA_REQUIRED: 'mfa_required',            // the password was right: ask for a code, then `error.completeMfa(code)`
  INVALID_MFA_CODE: 'invalid_mfa_code',     // not the app's current code nor an unused recovery code
  MFA_CODE_REUSED: 'mfa_code_reused',       // that code was already used: wait for the next one
  MFA_CHALLENGE_EXPIRED: 'mfa_challenge_expired', // the code step took over 5 minutes: log in again
  INVALID_MFA_CHALLENGE: 'invalid_mfa_challenge', // the challenge was used already: log in again
  MFA_ENROLMENT_REQUIRED: 'mfa_enrolment_required', // the account requires a second factor the user lacks
  SSO_DENIED: 'sso_denied',                 // the identity provider did not sign the person in
  SSO_STATE_INVALID: 'sso_state_invalid',   // unknown, used or expired state: start the sign-in again
  SSO_NOT_CONFIGURED: 'sso_not_configured', // the tenant has no (enabled) single sign-on
  SESSION_NOT_ALLOWED: 'session_not_allowed', // the user has no agent profile
  LICENSE_MISSING: 'license_missing',       // the account has no queue-mgmt license
  NOT_AN_AGENT: 'not_an_agent',
  TENANT_REQUIRED: 'tenant_required',       // the host names no tenant
  BAD_TOKEN: 'bad_token',                   // token refused (expired, other tenant, tampered)
  NOT_LOGGED_IN: 'not_logged_in',
  NOT_CONNECTED: 'not_connected',           // a command needs the channel and it is down
  TIMEOUT: 'timeout',                       // no ack in time
  COMMAND_FAILED: 'command_failed',         // the server refused a command (see `details`)
  NETWORK: 'network',                       // the API could not be reached
  TAKEOVER: 'takeover',                     // another session of this agent took over
  MICROPHONE_DENIED: 'microphone_denied',   // getUserMedia refused
  MEDIA_FAILED: 'media_failed',             // the WebRTC leg failed (ICE/DTLS/SDP)
  REGISTRATION_FAILED: 'registration_failed', // the media leg could not register (WSS/digest)
  NO_CALL: 'no_call',                       // call control without a call
  SERVER_ERROR: 'server_error',
});

/**
 * API error codes (JSON body `code`) → SDK codes; anything else keeps the API's own code.
 * @type {Readonly<Record<string, string>>}
 */
const API_CODES = Object.freeze({
  invalid_credentials: ErrorCodes.BAD_CREDENTIALS,
  too_many_login_attempts: ErrorCodes.TOO_MANY_ATTEMPTS,
  session_not_allowed: ErrorCodes.SESSION_NOT_ALLOWED,
  license_required: ErrorCodes.LICENSE_MISSING,
  license_missing: ErrorCodes.LICENSE_MISSING,
  not_an_agent: ErrorCodes.NOT_AN_AGENT,
  tenant_required: ErrorCodes.TENANT_REQUIRED,
  invalid_token: ErrorCodes.BAD_TOKEN,
  token_expired: ErrorCodes.BAD_TOKEN,
  tenant_mismatch: ErrorCodes.BAD_TOKEN,
  missing_token: ErrorCodes.BAD_TOKEN,
  token_revoked: ErrorCodes.BAD_TOKEN,   // signed out (logout elsewhere, password change, admin)
  bad_token: ErrorCodes.BAD_TOKEN,
});

/** An error with a stable `code` (see ErrorCodes). */
export class AgentError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{status?: number, details?: unknown, cause?: unknown}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message);
    this.name = 'AgentError';
    this.code = code;
    this.status = extra.status;
    this.details = extra.details;
    /** @type {number | undefined} set on a 429 (`Retry-After`) */
    this.retryAfterSeconds;
    /**
     * set on `mfa_required` from `login()`: send the agent's code; resolves like `login()`
     * once the channel is open, rejects with the code's refusal (call it again with another code)
     * @type {((code: string) => Promise<import('../types/index.js').Grant>) | undefined}
     */
    this.completeMfa;
    if (extra.cause !== undefined) this.cause = extra.cause;
  }
}

/**
 * The SDK code for an API error code.
 * @param {string | undefined} apiCode
 * @param {number} [status]
 * @returns {string}
 */
export function mapApiCode(apiCode, status) {
  if (apiCode && API_CODES[apiCode]) return API_CODES[apiCode];
  if (apiCode) return apiCode;
  if (status === 401) return ErrorCodes.BAD_TOKEN;
  if (status !== undefined && status >= 500) return ErrorCodes.SERVER_ERROR;
  return ErrorCodes.COMMAND_FAILED;
}
