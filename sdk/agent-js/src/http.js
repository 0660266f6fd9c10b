/**
 * The REST calls the SDK makes, over `fetch`: /auth/login (and its second step
 * /auth/login/mfa), /auth/sso and /auth/sso/callback, /auth/refresh, /auth/exchange,
 * /auth/logout and PUT /api/agents/me/state. The tenant is the host name (SPEC: "Tenant —
 * identified by the subdomain of the host name used"), so every URL is on `host`.
 */
import { AgentError, ErrorCodes, mapApiCode } from './errors.js';

/** @typedef {import('../types/index.js').Grant} Grant */

export class HttpClient {
  /**
   * @param {{baseUrl: string, fetch: typeof fetch}} options
   */
  constructor({ baseUrl, fetch }) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
    this._fetch = fetch;
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {{token?: string | null, body?: unknown}} [options]
   * @returns {Promise<any>} the JSON body (null for 204)
   */
  async request(method, path, { token, body } = {}) {
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = `Bearer ${token}`;
    let response;
    try {
      response = await this._fetch(this.baseUrl + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      const reason = /** @type {any} */ (cause);
      throw new AgentError(ErrorCodes.NETWORK, `${method} ${path}: ${reason && reason.message ? reason.message : reason}`, { cause });
    }
    const text = await response.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = null; }
    }
    if (!response.ok) {
      const code = mapApiCode(data && data.code, response.status);
      const error = new AgentError(code, (data && data.message) || `${method} ${path} answered ${response.status}`,
        { status: response.status, details: data && data.details });
      const retryAfter = response.headers.get('Retry-After');
      if (retryAfter) error.retryAfterSeconds = Number(retryAfter);
      throw error;
    }
    return data;
  }

  /** @param {string} username @param {string} password @returns {Promise<Grant>} */
  login(username, password) {
    return this.request('POST', '/auth/login', { body: { username, password, session: 'agent' } });
  }

  /**
   * The second step of a login answered 401 `mfa_required` (docs/api.md, POST /auth/login/mfa).
   * @param {string} challengeToken the login error's `details.challenge_token`
   * @param {string} code the authenticator app's 6 digits, or a recovery code
   * @returns {Promise<Grant>}
   */
  loginMfa(challengeToken, code) {
    return this.request('POST', '/auth/login/mfa', { body: { challenge_token: challengeToken, code } });
  }

  /** @returns {Promise<{enabled: boolean, display_name: string | null, start_url: string | null}>} */
  ssoOptions() {
    return this.request('GET', '/auth/sso');
  }

  /**
   * Finish a single sign-on from the redirect page's `code` and `state` (docs/sso.md, step 4b).
   * @param {string} code @param {string} state @returns {Promise<Grant>}
   */
  ssoCallback(code, state) {
    return this.request('POST', '/auth/sso/callback', { body: { code, state } });
  }

  /**
   * @param {string} token any valid token (admin or agent): the answer is an agent token
   * @returns {Promise<Grant>}
   */
  exchange(token) {
    return this.request('POST', '/auth/exchange', { token, body: { session: 'agent' } });
  }

  /** @param {string} token @returns {Promise<Grant>} */
  refresh(token) {
    return this.request('POST', '/auth/refresh', { token });
  }

  /** @param {string | null | undefined} token the session to end (revoked server side) */
  logout(token) {
    return this.request('POST', '/auth/logout', token ? { token } : {});
  }

  /**
   * @param {string} token @param {string} state @param {string | null | undefined} reason
   * @returns {Promise<{state: string, state_reason: string | null}>} the agent
   */
  putState(token, state, reason) {
    /** @type {{state: string, reason?: string}} */
    const body = { state };
    if (reason !== undefined && reason !== null) body.reason = reason;
    return this.request('PUT', '/api/agents/me/state', { token, body });
  }
}
