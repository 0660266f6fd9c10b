/**
 * The agent: login or exchange, the agent channel, offers and calls, and the media leg.
 *
 * Events (SPEC "Agent SDK events"): `connection`, `state`, `offer`, `call`, `media`,
 * `supervisor`, `takeover`, `error`; `consult` (this agent's consultation failed: rejected by
 * the consulted agent, or missed); and `preview` (an outbound campaign's contact offered
 * before dialling, src/preview.js). Server messages are dispatched through one explicit
 * registry (`HANDLERS`); unknown message types are ignored, so a newer server does not break
 * an older SDK.
 */
import { Call } from './call.js';
import { Channel, CHANNEL_PATH } from './channel.js';
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';
import { HttpClient } from './http.js';
import { DEFAULT_WSS_PORT, MediaLeg } from './media.js';
import { Offer } from './offer.js';
import { PreviewOffer } from './preview.js';
import { TokenSession } from './session.js';
import { ADMIN_TOKEN_KEY, AGENT_TOKEN_KEY, defaultStorage } from './storage.js';

/** @typedef {import('../types/index.js').Ack} Ack */
/** @typedef {import('../types/index.js').AgentStateName} AgentStateName */
/** @typedef {import('../types/index.js').CallPhase} CallPhase */
/** @typedef {import('../types/index.js').ConnectionState} ConnectionState */
/** @typedef {import('../types/index.js').Grant} Grant */
/** @typedef {import('../types/index.js').OfferEnd} OfferEnd */
/** @typedef {import('../types/index.js').PreviewEnd} PreviewEnd */
/** @typedef {import('../types/index.js').SipCredentials} SipCredentials */
/** @typedef {import('../types/index.js').SsoOptions} SsoOptions */
/** @typedef {import('./channel.js').ServerMessage} ServerMessage */

/**
 * Agent states accepted by setState (SPEC "Agent state").
 * @type {readonly AgentStateName[]}
 */
export const STATES = Object.freeze(['available', 'not_ready', 'wrap_up', 'offline']);
/** How long `offer.accept()` waits for the ring to reach the media leg. */
const RING_WAIT_MS = 5000;
/** An offer not withdrawn by the server this long after its own timeout is dropped as missed. */
const OFFER_GRACE_MS = 5000;

/** @type {Readonly<Record<string, OfferEnd>>} */
const withdrawnReason = Object.freeze({
  missed: 'missed', rejected: 'rejected', caller_left: 'caller_left', answered_elsewhere: 'answered_elsewhere',
  cancelled: 'cancelled', // a consultation the consulting agent cancelled
});
/** @type {Readonly<Record<string, PreviewEnd>>} */
const previewWithdrawnReason = Object.freeze({ timeout: 'timeout', campaign_not_running: 'campaign_not_running' });

export class Agent extends Emitter {
  /**
   * @param {import('../types/index.js').AgentOptions} options
   */
  constructor(options) {
    super();
    if (!options || !options.host) throw new AgentError(ErrorCodes.TENANT_REQUIRED, 'createAgent needs {host}.');
    this.options = options;
    const secure = options.secure ?? (globalThis.location ? globalThis.location.protocol === 'https:' : true);
    this.host = options.host;
    const fetchImpl = options.fetch || globalThis.fetch?.bind(globalThis);
    this._WebSocket = options.WebSocket || globalThis.WebSocket;
    this.storage = options.storage || defaultStorage();
    this.http = new HttpClient({ baseUrl: `${secure ? 'https' : 'http'}://${this.host}`, fetch: fetchImpl });
    this.session = new TokenSession({ http: this.http, storage: this.storage, key: options.tokenKey || AGENT_TOKEN_KEY });
    this.session.on('refreshFailed', (/** @type {AgentError} */ err, /** @type {boolean} */ expired) => {
      if (expired) this._sessionOver(err);
    });
    this._channelUrl = `${secure ? 'wss' : 'ws'}://${this.host}${CHANNEL_PATH}`;
    /** @type {Channel | null} */
    this.channel = null;
    /** @type {MediaLeg | null} */
    this.media = null;
    /** @type {{state: AgentStateName, reason: string | null, changedAt: string | null} | null} */
    this.state = null;
    /** @type {Offer | null} */
    this.offer = null;
    /** @type {PreviewOffer | null} */
    this.preview = null;
    /** @type {Call | null} */
    this.call = null;
    /** @type {Call | null} the last call (setDisposition after it ended) */
    this.lastCall = null;
    /** @type {string | null} */
    this.agentId = null;
    /** @type {string | null} */
    this.sessionId = null;
    /** @type {'idle' | ConnectionState} */
    this.connection = 'idle';
    /** @type {{resolve: () => void, reject: (error: AgentError) => void}[]} */
    this._openWaiters = [];
    /** @type {string | null} the audio state last emitted (`media`: one event per change) */
    this._audioState = null;
    /** a refused channel token got its one refresh (reset when the channel opens) */
    this._authRetried = false;
  }

  // -- authentication ---------------------------------------------------------------------------

  /**
   * Log in with the agent's username and password; resolves once the channel is open.
   * A user with a second factor gets a rejection with code `mfa_required` (not an `error`
   * event: it is a step, not a failure) whose `completeMfa(code)` finishes the sign-in.
   * @param {string} username
   * @param {string} password
   * @returns {Promise<Grant>}
   */
  async login(username, password) {
    let grant;
    try {
      grant = await this.http.login(username, password);
    } catch (err) {
      const error = /** @type {AgentError} */ (err);
      const challenge = error.code === ErrorCodes.MFA_REQUIRED && /** @type {any} */ (error.details)?.challenge_token;
      if (!challenge) throw this._fail(error);
      // the challenge stays valid after a wrong code (only a sign-in uses it up), so the
      // continuation may be called again with the next code
      error.completeMfa = (code) => this._start(() => this.http.loginMfa(challenge, code));
      throw error;
    }
    return this._adopt(grant);
  }

  /**
   * What single sign-on the tenant offers (`GET /auth/sso`): `startUrl` is where the login
   * page's "Sign in with {displayName}" button navigates; the identity provider then sends the
   * browser to `redirectPath` (a page on this host) with `code` and `state` for `loginWithSso()`.
   * @param {{redirectPath?: string}} [options]
   * @returns {Promise<SsoOptions>}
   */
  async ssoOptions({ redirectPath } = {}) {
    const options = await this._authFailure(() => this.http.ssoOptions());
    if (!options.enabled || !options.start_url) return { enabled: false, displayName: null, startUrl: null };
    const query = new URLSearchParams({ session: 'agent' });
    if (redirectPath) query.set('redirect_path', redirectPath);
    return { enabled: true, displayName: options.display_name, startUrl: `${this.http.baseUrl}${options.start_url}?${query}` };
  }

  /**
   * Finish a single sign-on on the redirect page: `code` and `state` from its URL (pass
   * `location.search` or `location.href` as they are, or `{code, state}`). Resolves like
   * `login()` once the channel is open; a provider's refusal (`error` in the URL) rejects with
   * `sso_denied` without asking the API.
   * @param {string | {code: string, state: string}} callback
   * @returns {Promise<Grant>}
   */
  loginWithSso(callback) {
    /** @type {{code?: string, state?: string, error?: string}} */
    const params = typeof callback === 'string' ? ssoParams(callback) : callback;
    if (params.error) {
      return Promise.reject(this._fail(new AgentError(ErrorCodes.SSO_DENIED,
        `The identity provider did not sign the user in (${params.error}).`, { details: { error: params.error } })));
    }
    return this._start(() => this.http.ssoCallback(params.code || '', params.state || ''));
  }

  /**
   * Trade a token for an agent session (admin → agent single sign-on). Without an argument,
   * the admin web UI's token is read from storage (`admin_auth_token`).
   * @param {string} [adminToken]
   * @returns {Promise<Grant>}
   */
  async exchange(adminToken) {
    const token = adminToken || this.storage.getItem(ADMIN_TOKEN_KEY);
    if (!token) throw this._fail(new AgentError(ErrorCodes.NOT_LOGGED_IN, `No token given and none under '${ADMIN_TOKEN_KEY}'.`));
    return this._start(() => this.http.exchange(token));
  }

  /**
   * Resume with the agent token in storage; false (and no connection) when there is none.
   * @returns {Promise<boolean>}
   */
  async restore() {
    if (!this.session.restore()) return false;
    await this.connect();
    return true;
  }

  /**
   * Refresh the token now (it is refreshed by itself before it expires).
   * @returns {Promise<Grant>}
   */
  refresh() {
    return this.session.refresh();
  }

  get token() {
    return this.session.token;
  }

  /**
   * Go offline (best effort), close the channel and the media leg, revoke the token server side
   * (best effort: `POST /auth/logout` with it) and forget it.
   * @returns {Promise<void>}
   */
  async logout() {
    if (this.channel && this.channel.isOpen) {
      try { await this.setState('offline'); } catch { /* leaving anyway */ }
    }
    const token = this.session.token;
    this._stop();
    try { await this.http.logout(token); } catch { /* forgotten locally anyway */ }
    this.session.clear();
    this.state = null;
  }

  // -- the channel --------------------------------------------------------------------------------

  /**
   * Open the channel with the current token; resolves on `connection` open.
   * @returns {Promise<void>}
   */
  connect() {
    if (!this.session.token) return Promise.reject(new AgentError(ErrorCodes.NOT_LOGGED_IN, 'Not logged in.'));
    if (!this._WebSocket) return Promise.reject(new AgentError(ErrorCodes.NETWORK, 'No WebSocket implementation: pass {WebSocket}.'));
    if (!this.channel) {
      this.channel = new Channel({
        url: this._channelUrl, WebSocket: this._WebSocket, token: () => this.session.token,
        backoff: this.options.backoff, commandTimeoutMs: this.options.commandTimeoutMs,
      });
      this.channel.on('state', (/** @type {ConnectionState} */ state, /** @type {object} */ detail) => this._channelState(state, detail));
      this.channel.on('message', (/** @type {ServerMessage} */ message) => this._dispatch(message));
      this.channel.on('takeover', () => this._takenOver());
      this.channel.on('authFailed', (/** @type {AgentError} */ err) => this._channelAuthFailed(err));
      this.channel.on('failed', (/** @type {AgentError} */ err) => this._openFailed(this._fail(err)));
    }
    if (this.channel.isOpen) return Promise.resolve();
    /** @type {Promise<void>} */
    const opened = new Promise((resolve, reject) => this._openWaiters.push({ resolve, reject }));
    this.channel.open();
    return opened;
  }

  /**
   * @param {ConnectionState} state
   * @param {object} [detail]
   */
  _channelState(state, detail) {
    this.connection = state;
    if (state === 'open') {
      // `connection` is emitted by its message handler (it carries agentId and sessionId)
      return;
    }
    this.emit('connection', { state, ...(detail || {}) });
  }

  /** @param {AgentError} error */
  _openFailed(error) {
    const waiters = this._openWaiters.splice(0);
    for (const waiter of waiters) waiter.reject(error);
  }

  /** @param {AgentError} error */
  async _channelAuthFailed(error) {
    // the token was refused: one refresh (it may have just expired) and one more try, then
    // the session is over
    if (!this._authRetried) {
      this._authRetried = true;
      try {
        await this.session.refresh();
        /** @type {Channel} the channel that refused the token */ (this.channel).open();
        return;
      } catch {
        // fall through: the refresh was refused too
      }
    }
    this._openFailed(error);
    this._sessionOver(error);
  }

  /** @param {AgentError} error */
  _sessionOver(error) {
    this._stop();
    this.session.clear();
    this._fail(new AgentError(ErrorCodes.BAD_TOKEN, `The session ended: ${error.message}`, { cause: error }));
  }

  _takenOver() {
    this._stopMedia();
    this._openFailed(new AgentError(ErrorCodes.TAKEOVER, 'Another session of this agent took over.'));
    this.emit('takeover', {});
    this._fail(new AgentError(ErrorCodes.TAKEOVER, 'Another session of this agent took over.'));
  }

  _stop() {
    if (this.channel) this.channel.close();
    this._stopMedia();
    if (this.offer && this.offer.pending) this.offer._end('cancelled');
    this.offer = null;
    if (this.preview && this.preview.pending) this.preview._end('cancelled');
    this.preview = null;
  }

  _stopMedia() {
    if (this.media) {
      this.media.stop();
      this.media = null;
    }
  }

  // -- state --------------------------------------------------------------------------------------

  /**
   * Set the agent's state (`available`, `not_ready`, `wrap_up`, `offline`) with an optional
   * reason. Over the channel when it is open, else through `PUT /api/agents/me/state`.
   * @param {AgentStateName} state
   * @param {string | null} [reason]
   * @returns {Promise<Ack | {ok: true, state: string, reason: string | null}>}
   */
  async setState(state, reason) {
    if (!STATES.includes(state)) {
      throw new AgentError(ErrorCodes.COMMAND_FAILED, `Unknown state '${state}'; one of ${STATES.join(', ')}.`);
    }
    /** @type {{state: AgentStateName, reason?: string}} */
    const fields = { state };
    if (reason !== undefined && reason !== null) fields.reason = reason;
    if (this.channel && this.channel.isOpen) return this.channel.command('setState', fields);
    if (!this.session.token) throw new AgentError(ErrorCodes.NOT_LOGGED_IN, 'Not logged in.');
    const agent = await this.http.putState(this.session.token, state, reason);
    return { ok: true, state: agent.state, reason: agent.state_reason };
  }

  /**
   * The disposition of the current call, or of the last one during wrap-up (a campaign
   * call's also goes on its contact, with `note`: Call.setDisposition).
   * @param {string} code
   * @param {string} [note]
   * @returns {Promise<Ack>}
   */
  setDisposition(code, note) {
    const call = this.call || this.lastCall;
    if (!call) return Promise.reject(new AgentError(ErrorCodes.NO_CALL, 'No call to set a disposition on.'));
    return call.setDisposition(code, note);
  }

  // -- server messages ----------------------------------------------------------------------------

  /** @param {ServerMessage} message */
  _dispatch(message) {
    const handler = HANDLERS[message.type];
    if (handler) handler(this, message);
  }

  /** @param {ServerMessage} message */
  _onConnection(message) {
    this._authRetried = false;
    const resumed = this.sessionId !== null;
    this.agentId = message.agentId ?? this.agentId;
    this.sessionId = message.sessionId ?? null;
    this.emit('connection', { state: 'open', agentId: this.agentId, sessionId: this.sessionId, resumed });
    const waiters = this._openWaiters.splice(0);
    for (const waiter of waiters) waiter.resolve();
    this._startMedia(message.sip);
  }

  /** @param {ServerMessage} message */
  _onState(message) {
    this.state = { state: message.state, reason: message.reason ?? null, changedAt: message.changedAt ?? null };
    this.emit('state', { ...this.state, previousState: message.previousState ?? null });
  }

  /** @param {ServerMessage} message */
  _onOffer(message) {
    if (message.kind === 'preview') {
      this._onPreview(message);
      return;
    }
    if (message.phase === 'withdrawn') {
      if (this.call && this.call.id === message.offerId && this.call.phase === 'connecting') {
        // accepted, but the agent's leg never answered (media failed): the offer moved on
        this.call._phase('ended', message.cause || message.reason);
      }
      if (this.offer && this.offer.id === message.offerId) {
        const offer = this.offer;
        this.offer = null;
        offer._end(withdrawnReason[message.reason] || 'missed', message.cause);
        if (this.media && this.media.ringing) this.media.decline(); // stop our ring too
      }
      return;
    }
    if (this.offer && this.offer.pending) this.offer._end('cancelled');
    const offer = new Offer(/** @type {any} an `offer` message */ (message), {
      accept: (o) => this._accept(o),
      reject: (o) => this._reject(o),
    });
    this.offer = offer;
    const lifetimeMs = (offer.timeoutSeconds || 60) * 1000 + OFFER_GRACE_MS;
    const timer = setTimeout(() => {
      if (this.offer === offer && offer.pending) {
        this.offer = null;
        offer._end('missed', 'NO_ANSWER');
      }
    }, lifetimeMs);
    const handle = /** @type {any} */ (timer); // node's Timeout: do not hold the process open
    if (typeof handle.unref === 'function') handle.unref();
    offer.on('ended', () => clearTimeout(timer));
    this.emit('offer', offer);
  }

  /**
   * A campaign contact to preview, or its withdrawal (timeout, campaign no longer running).
   * @param {ServerMessage} message
   */
  _onPreview(message) {
    if (message.phase === 'withdrawn') {
      if (this.preview && this.preview.id === message.offerId) {
        const preview = this.preview;
        this.preview = null;
        preview._end(previewWithdrawnReason[message.reason] || 'timeout');
      }
      return;
    }
    if (this.preview && this.preview.pending) this.preview._end('cancelled');
    const preview = new PreviewOffer(/** @type {any} an `offer` message of kind preview */ (message), {
      accept: (p) => this._answerPreview(p, 'accept'),
      skip: (p) => this._answerPreview(p, 'skip'),
    });
    this.preview = preview;
    // the server's withdrawal may be lost with the socket: the offer is over by then anyway
    const timer = setTimeout(() => preview._end('timeout'), (preview.timeoutSeconds || 60) * 1000 + OFFER_GRACE_MS);
    const handle = /** @type {any} */ (timer); // node's Timeout: do not hold the process open
    if (typeof handle.unref === 'function') handle.unref();
    preview.on('ended', () => {
      clearTimeout(timer);
      if (this.preview === preview) this.preview = null;
    });
    this.emit('preview', preview);
  }

  /**
   * @param {PreviewOffer} preview
   * @param {'accept' | 'skip'} command
   * @returns {Promise<Ack>}
   */
  _answerPreview(preview, command) {
    return /** @type {Channel} previews come over it */ (this.channel).command(command, { offerId: preview.id });
  }

  /** @param {ServerMessage} message */
  _onCall(message) {
    const { phase, callId } = message;
    let call = this.call && this.call.id === callId ? this.call : null;
    if (!call) {
      if (phase === 'ended') {
        if (this.lastCall && this.lastCall.id === callId) return;
        if (this.offer && this.offer.id === callId) {
          const offer = this.offer;
          this.offer = null;
          offer._end('caller_left', message.cause);
          return;
        }
      }
      if (phase === 'transferred') return; // a call this session no longer has
      // a call this session did not see start (accepted on a desk phone, or after a reconnect)
      call = this._newCall(callId, this.offer && this.offer.id === callId ? this.offer : null);
    }
    if (phase === 'transferred') {
      call._transferred(message.to ?? null); // first: the media leg's end must not name another cause
      if (this.media) this.media.hangup(); // the server hangs the leg up; no need to wait for its BYE
      return;
    }
    call._phase(phase, message.cause);
  }

  /**
   * This agent's consultation ended without its asking (`consult` phase `failed`: the
   * consulted agent rejected it, or it was missed); the agent has its caller again.
   * @param {ServerMessage} message
   */
  _onConsult(message) {
    const call = this.call && this.call.id === message.callId ? this.call : null;
    const event = { phase: message.phase, reason: message.reason ?? null, to: message.to ?? null };
    if (call) call.emit('consult', event);
    this.emit('consult', { ...event, callId: message.callId, call });
  }

  /** @param {ServerMessage} message */
  _onMedia(message) {
    this._media({ state: message.state, callId: message.callId ?? (this.call && this.call.id), source: 'server' });
  }

  /**
   * One `media` event per change of the audio state, whoever reported it (server or leg).
   * @param {{state: string, callId?: string | null, source: 'server' | 'local', stream?: MediaStream | null}} event
   */
  _media(event) {
    const call = this.call;
    if (call) {
      if (event.state === 'held') call.held = true;
      if (event.state === 'muted') call.muted = true;
      if (event.state === 'connected') { call.held = false; call.muted = false; }
    }
    if (['connected', 'muted', 'held', 'failed'].includes(event.state)) {
      if (this._audioState === event.state) return;
      this._audioState = event.state;
    }
    this.emit('media', event);
  }

  /** @param {ServerMessage} message */
  _onSupervisor(message) {
    const { type, at, ...rest } = message;
    this.emit('supervisor', { ...rest, at });
  }

  /** @param {ServerMessage} message */
  _onError(message) {
    this._fail(new AgentError(message.code || ErrorCodes.SERVER_ERROR, message.message || 'Agent channel error.'));
  }

  // -- offers and calls ---------------------------------------------------------------------------

  /**
   * @param {string} callId
   * @param {Offer | null} offer
   * @returns {Call}
   */
  _newCall(callId, offer) {
    const call = new Call(callId, { offer, control: (c, type, fields) => this._control(c, type, fields) });
    call.on('phase', (/** @type {{phase: CallPhase, cause?: string}} */ { phase, cause }) => {
      if (phase === 'ended') {
        if (this.call === call) this.call = null;
        this.lastCall = call;
        this._audioState = null;
        if (this.media) this.media.hangup();
      }
      this.emit('call', { phase, callId: call.id, cause, call });
    });
    this.call = call;
    return call;
  }

  /**
   * @param {Offer} offer
   * @returns {Promise<Call>}
   */
  async _accept(offer) {
    const media = this.media;
    const ringing = media ? media.waitRinging(RING_WAIT_MS) : null;
    await /** @type {Channel} offers come over it */ (this.channel).command('accept', { offerId: offer.id });
    if (this.offer === offer) this.offer = null;
    const call = this.call && this.call.id === offer.id ? this.call : this._newCall(offer.id, offer);
    call._phase('connecting');
    if (ringing && media) {
      try {
        call._session = media.answer(await ringing);
      } catch (err) {
        this._fail(/** @type {AgentError} */ (err));
      }
    }
    return call;
  }

  /**
   * @param {Offer} offer
   * @returns {Promise<Ack>}
   */
  async _reject(offer) {
    if (this.offer === offer) this.offer = null;
    const media = this.media;
    if (offer.kind === 'consult') {
      // the server rejects the consultation first (the consulting agent is told `rejected`)
      // and ends the ringing leg itself; declining first would end it as `missed` and leave
      // nothing to reject. The local decline is the fallback when the command fails.
      try {
        return await /** @type {Channel} offers come over it */ (this.channel).command('reject', { offerId: offer.id });
      } finally {
        if (media && media.ringing) media.decline();
      }
    }
    if (media && media.ringing) media.decline();
    return /** @type {Channel} offers come over it */ (this.channel).command('reject', { offerId: offer.id });
  }

  /**
   * Call control (docs/agents.md "Agent → server"): every command goes to the server, which
   * acts on the switch (hold, DTMF, hang-up through `call.control`). The microphone is the
   * SDK's own: mute/unmute also silence the media leg's track. A hang-up also ends the media
   * leg at once (a BYE, the same as the server's kill of the agent's leg) so it works when the
   * channel is down; the server's `no_call` after that is not an error.
   * @param {Call | null} call
   * @param {string} type
   * @param {Record<string, unknown>} [fields]
   * @returns {Promise<any>} the ack, or `{ok: true, local: true}` when only the media leg acted
   */
  async _control(call, type, fields = {}) {
    const media = this.media;
    let local = false;
    if (media) {
      /** @type {Record<string, () => boolean>} */
      const actions = { hangup: () => media.hangup(), mute: () => media.mute(), unmute: () => media.unmute() };
      local = actions[type] ? actions[type]() : false;
    }
    if (!this.channel || !this.channel.isOpen) {
      if (local) return { ok: true, local: true };
      throw new AgentError(ErrorCodes.NOT_CONNECTED, `The agent channel is not connected (${type}).`);
    }
    const extra = type === 'disposition' && call ? { callId: call.id } : {};
    try {
      return await this.channel.command(type, { ...fields, ...extra });
    } catch (err) {
      if (local) return { ok: true, local: true, server: err };
      throw err;
    }
  }

  // -- media --------------------------------------------------------------------------------------

  _mediaEnabled() {
    const option = this.options.media;
    if (option === false) return false;
    return typeof globalThis.RTCPeerConnection === 'function' || option === true || typeof option === 'object';
  }

  /**
   * Credentials: the channel's `connection.sip` when the server sends it, else `options.sip`.
   * @param {SipCredentials | undefined} fromServer
   * @returns {Required<SipCredentials> | null}
   */
  _sipCredentials(fromServer) {
    const given = fromServer || this.options.sip;
    if (!given || !given.username || !given.password) return null;
    const hostname = this.host.replace(/:\d+$/, '');
    const account = this.session.grant && this.session.grant.account;
    const domain = given.domain || (account && account.subdomain) || hostname.split('.')[0];
    const wsUrl = given.wsUrl || `wss://${hostname}:${DEFAULT_WSS_PORT}`;
    return { username: given.username, password: given.password, domain, wsUrl };
  }

  /** @param {SipCredentials | undefined} fromServer */
  _startMedia(fromServer) {
    if (this.media || !this._mediaEnabled()) return;
    const credentials = this._sipCredentials(fromServer);
    if (!credentials) return;
    const mediaOptions = typeof this.options.media === 'object' ? this.options.media : {};
    const leg = new MediaLeg({ credentials, JsSIP: this.options.JsSIP, ...mediaOptions });
    leg.on('registered', () => this.emit('media', { state: 'registered', source: 'local' }));
    leg.on('unregistered', () => this.emit('media', { state: 'unregistered', source: 'local' }));
    leg.on('registrationFailed', (/** @type {AgentError} */ err) => this._fail(err));
    leg.on('error', (/** @type {AgentError} */ err) => this._fail(err));
    leg.on('media', (/** @type {{state: string, stream?: MediaStream | null}} */ event) => this._media({ ...event, callId: this.call && this.call.id, source: 'local' }));
    leg.on('sessionEnded', (/** @type {{session: unknown, cause: string}} */ { session, cause }) => {
      // the answered leg is gone (hung up, or it never got media: microphone refused, ICE or
      // DTLS failed): the call is over for this agent even if the server's `ended` is late
      const call = this.call;
      if (call && call.active && call._session === session) {
        call._phase('ended', cause === 'Terminated' || cause === 'BYE' ? 'NORMAL_CLEARING' : cause);
      }
    });
    this.media = leg;
    leg.start();
  }

  /**
   * @param {AgentError} error
   * @returns {AgentError} the same error (to throw it)
   */
  _fail(error) {
    this.emit('error', error);
    return error;
  }

  /**
   * A sign-in request, then its grant adopted and the channel opened.
   * @param {() => Promise<Grant>} request
   * @returns {Promise<Grant>}
   */
  async _start(request) {
    return this._adopt(await this._authFailure(request));
  }

  /** @param {Grant} grant @returns {Promise<Grant>} */
  async _adopt(grant) {
    this.session.adopt(grant);
    await this.connect();
    return grant;
  }

  /**
   * @template T
   * @param {() => Promise<T>} request
   * @returns {Promise<T>}
   */
  async _authFailure(request) {
    try {
      return await request();
    } catch (err) {
      throw this._fail(/** @type {AgentError} */ (err));
    }
  }
}

/**
 * Server message type → handler (docs/agents.md "Server → agent").
 * @type {Readonly<Record<string, (agent: Agent, message: ServerMessage) => void>>}
 */
const HANDLERS = Object.freeze({
  connection: (agent, m) => agent._onConnection(m),
  state: (agent, m) => agent._onState(m),
  offer: (agent, m) => agent._onOffer(m),
  call: (agent, m) => agent._onCall(m),
  consult: (agent, m) => agent._onConsult(m),
  media: (agent, m) => agent._onMedia(m),
  supervisor: (agent, m) => agent._onSupervisor(m),
  error: (agent, m) => agent._onError(m),
});

/**
 * `code`, `state` and `error` of a redirect page's URL (a whole URL or its query string).
 * @param {string} url
 * @returns {{code?: string, state?: string, error?: string}}
 */
export function ssoParams(url) {
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1).split('#')[0] : url);
  return { code: query.get('code') || undefined, state: query.get('state') || undefined, error: query.get('error') || undefined };
}
