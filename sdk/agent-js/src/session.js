/**
 * The agent's token: kept in the storage under AGENT_TOKEN_KEY and re-issued through
 * /auth/refresh before it expires (SPEC: tokens are short-lived, ~8 h by default, and
 * `/auth/refresh` re-issues one; the presented token must still be valid, so refreshing late
 * is not an option). The refresh runs when a quarter of the lifetime is left (at most 5 minutes
 * before expiry), and a failed refresh is retried until the token actually expires.
 */
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';
import { AGENT_TOKEN_KEY, decodeClaims } from './storage.js';

/** @typedef {import('../types/index.js').Grant} Grant */

const MAX_MARGIN_MS = 5 * 60 * 1000;
const RETRY_MS = 5000;

export class TokenSession extends Emitter {
  /**
   * @param {{http: import('./http.js').HttpClient, storage: import('../types/index.js').TokenStorage, key?: string,
   *          now?: () => number}} options
   */
  constructor({ http, storage, key = AGENT_TOKEN_KEY, now = () => Date.now() }) {
    super();
    this._http = http;
    this._storage = storage;
    this._key = key;
    this._now = now;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this._timer = undefined;
    /** @type {string | null} */
    this.token = null;
    /**
     * the last grant's `user` and `account` (null after a restore)
     * @type {{user: Grant['user'] | null, account: Grant['account'] | null, session: Grant['session']} | null}
     */
    this.grant = null;
  }

  /** Milliseconds since epoch when the token expires (null without a token). */
  get expiresAt() {
    const claims = this.token ? decodeClaims(this.token) : null;
    return claims && claims.exp ? claims.exp * 1000 : null;
  }

  get valid() {
    const at = this.expiresAt;
    return Boolean(this.token) && at !== null && at > this._now();
  }

  /**
   * Take a grant from /auth/login, /auth/exchange or /auth/refresh.
   * @param {Grant} grant
   */
  adopt(grant) {
    this.token = grant.token;
    this.grant = { user: grant.user || null, account: grant.account || null, session: grant.session };
    this._storage.setItem(this._key, grant.token);
    this._schedule();
    this.emit('token', this.token);
  }

  /** Resume from storage; false when nothing usable is stored. */
  restore() {
    const stored = this._storage.getItem(this._key);
    if (!stored) return false;
    this.token = stored;
    if (!this.valid) {
      this.clear();
      return false;
    }
    this._schedule();
    return true;
  }

  clear() {
    clearTimeout(this._timer);
    this._timer = undefined;
    this.token = null;
    this.grant = null;
    this._storage.removeItem(this._key);
  }

  /**
   * Refresh now. Rejects with AgentError; BAD_TOKEN means the session is over.
   * @returns {Promise<Grant>}
   */
  async refresh() {
    if (!this.token) throw new AgentError(ErrorCodes.NOT_LOGGED_IN, 'Not logged in.');
    const grant = await this._http.refresh(this.token);
    this.adopt(grant);
    this.emit('refreshed', grant);
    return grant;
  }

  /** @param {number} [delayMs] default: when a quarter of the lifetime is left */
  _schedule(delayMs) {
    clearTimeout(this._timer);
    const at = this.expiresAt;
    if (at === null) return;
    const claims = decodeClaims(/** @type {string} */ (this.token)) || {};
    const lifetimeMs = claims.iat && claims.exp ? (claims.exp - claims.iat) * 1000 : MAX_MARGIN_MS * 4;
    const margin = Math.min(MAX_MARGIN_MS, lifetimeMs / 4);
    const wait = delayMs !== undefined ? delayMs : Math.max(0, at - margin - this._now());
    this._timer = setTimeout(() => this._refreshInTime(), wait);
    const handle = /** @type {any} */ (this._timer); // node's Timeout: do not hold the process open
    if (handle && typeof handle.unref === 'function') handle.unref();
  }

  async _refreshInTime() {
    try {
      await this.refresh();
    } catch (err) {
      const code = /** @type {any} */ (err)?.code;
      const expired = !this.valid || code === ErrorCodes.BAD_TOKEN;
      this.emit('refreshFailed', err, expired);
      // not expired: the token is valid, so expiresAt is a number
      if (!expired) this._schedule(Math.min(RETRY_MS, Math.max(0, /** @type {number} */ (this.expiresAt) - this._now())));
    }
  }
}
