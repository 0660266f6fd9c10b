/**
 * The agent channel (docs/agents.md, "The agent channel"): one WebSocket per agent session at
 * `GET /api/agents/me/channel`. The first message is `{"type": "auth", "token"}` (browsers cannot
 * set headers on a WebSocket); the server answers `{"type": "connection", "state": "open"}`.
 * Commands carry an `id` that the server echoes in `{"type": "ack", "id", "ok", "error"?}`.
 *
 * The channel reconnects by itself with exponential backoff and jitter (0.5 s doubling to 15 s)
 * after anything but a takeover (close code 4001 or a `takeover` message), a refused token, or
 * `close()`. Server messages are handed to the owner through the `message` event; what they mean
 * is the agent's business (agent.js).
 */
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes, mapApiCode } from './errors.js';

export const CHANNEL_PATH = '/api/agents/me/channel';
export const TAKEOVER_CLOSE_CODE = 4001;
/** The server refused the auth message (an `error` message precedes it). */
export const AUTH_FAILED_CLOSE_CODE = 4003;
/** Token problems a refresh may cure; other refusals (license, not an agent) are final. */
const TOKEN_CODES = new Set(['bad_token', 'invalid_token', 'token_expired', 'missing_token', 'token_revoked']);

/** @typedef {import('../types/index.js').Ack} Ack */
/** @typedef {{type: string, [field: string]: any}} ServerMessage a JSON message of the server */
/** @typedef {ReturnType<typeof setTimeout>} Timer */

export const BACKOFF = Object.freeze({ initialMs: 500, maxMs: 15000, factor: 2 });
const OPEN_TIMEOUT_MS = 10000;
const COMMAND_TIMEOUT_MS = 10000;

export class Channel extends Emitter {
  /**
   * @param {{url: string, WebSocket: any, token: () => string | null,
   *          backoff?: {initialMs: number, maxMs: number, factor: number},
   *          commandTimeoutMs?: number, random?: () => number}} options
   */
  constructor({ url, WebSocket, token, backoff = BACKOFF, commandTimeoutMs = COMMAND_TIMEOUT_MS, random = Math.random }) {
    super();
    this.url = url;
    this._WebSocket = WebSocket;
    this._token = token;
    this._backoff = backoff;
    this._commandTimeoutMs = commandTimeoutMs;
    this._random = random;
    /** @type {any} a WebSocket (the browser's, or `ws` in node) */
    this._ws = null;
    this._nextId = 1;
    /** @type {Map<string, {resolve: (ack: Ack) => void, reject: (error: AgentError) => void, timer: Timer, type: string}>} */
    this._pending = new Map();
    this._attempt = 0;
    /** @type {Timer | undefined} */
    this._retryTimer = undefined;
    /** @type {Timer | undefined} */
    this._openTimer = undefined;
    this._wanted = false;
    /** @type {{code: string, message: string} | null} the server's refusal of the auth message */
    this._refusal = null;
    /** @type {'idle' | import('../types/index.js').ConnectionState} */
    this.state = 'idle';
  }

  /** Start (or keep) the connection. */
  open() {
    this._wanted = true;
    if (this._ws || this._retryTimer) return;
    this._connect();
  }

  /** Stop for good: no reconnect; pending commands fail with NOT_CONNECTED. */
  close() {
    this._wanted = false;
    clearTimeout(this._retryTimer);
    this._retryTimer = undefined;
    this._teardown(1000, 'client closed');
    this._setState('closed', {});
  }

  get isOpen() {
    return this.state === 'open';
  }

  /**
   * Send a command and wait for its ack.
   * @param {string} type
   * @param {Record<string, unknown>} [fields]
   * @returns {Promise<Ack>}
   */
  command(type, fields = {}) {
    if (!this.isOpen || !this._ws) {
      return Promise.reject(new AgentError(ErrorCodes.NOT_CONNECTED, `The agent channel is not connected (${type}).`));
    }
    const id = String(this._nextId++);
    return new Promise((/** @type {(ack: Ack) => void} */ resolve, reject) => {
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new AgentError(ErrorCodes.TIMEOUT, `No answer to ${type} in ${this._commandTimeoutMs} ms.`));
      }, this._commandTimeoutMs);
      this._pending.set(id, { resolve, reject, timer, type });
      this._ws.send(JSON.stringify({ ...fields, type, id }));
    });
  }

  _connect() {
    this._refusal = null;
    this._setState(this._attempt === 0 ? 'connecting' : 'reconnecting', { attempt: this._attempt });
    let ws;
    try {
      ws = new this._WebSocket(this.url);
    } catch (cause) {
      this._scheduleRetry(cause);
      return;
    }
    this._ws = ws;
    ws.onopen = () => {
      const token = this._token();
      if (!token) {
        this._teardown(1000, 'no token');
        this._fail(new AgentError(ErrorCodes.NOT_LOGGED_IN, 'Not logged in.'), false);
        return;
      }
      ws.send(JSON.stringify({ type: 'auth', token }));
    };
    ws.onmessage = (/** @type {{data: unknown}} */ event) => {
      if (ws !== this._ws) return;
      let message;
      try {
        message = JSON.parse(typeof event.data === 'string' ? event.data : String(event.data));
      } catch {
        return; // not JSON: not ours to interpret
      }
      if (message && typeof message.type === 'string') this._receive(message);
    };
    ws.onclose = (/** @type {{code: number, reason?: string}} */ event) => {
      if (ws !== this._ws) return;
      this._dropSocket();
      if (event.code === TAKEOVER_CLOSE_CODE) {
        this._takenOver();
        return;
      }
      if (event.code === AUTH_FAILED_CLOSE_CODE) {
        const refused = this._refusal || { code: 'bad_token', message: event.reason || 'The channel refused the token.' };
        this._refusal = null;
        this._fail(new AgentError(mapApiCode(refused.code), refused.message, { details: refused }),
          TOKEN_CODES.has(refused.code));
        return;
      }
      if (this._wanted) this._scheduleRetry(new Error(`closed ${event.code} ${event.reason || ''}`.trim()));
    };
    ws.onerror = () => {
      // a close event follows; the retry is decided there
    };
    this._openTimer = setTimeout(() => {
      if (ws === this._ws && this.state !== 'open') this._teardown(4000, 'no connection message in time', true);
    }, OPEN_TIMEOUT_MS);
  }

  /** @param {ServerMessage} message */
  _receive(message) {
    switch (message.type) {
      case 'ack':
        this._ack(message);
        return;
      case 'connection':
        if (message.state === 'open') {
          clearTimeout(this._openTimer);
          this._attempt = 0;
          this._setState('open', message);
        }
        this.emit('message', message);
        return;
      case 'takeover':
        this.emit('message', message);
        this._teardown(1000, 'taken over');
        this._takenOver();
        return;
      case 'error':
        if (this.state !== 'open') {
          // before `connection`: the auth message was refused; the close (4003) that follows
          // decides, with this error's code (reconnecting with the same token cannot help)
          this._refusal = { code: message.code, message: message.message };
          return;
        }
        this.emit('message', message);
        return;
      default:
        this.emit('message', message);
    }
  }

  /** @param {ServerMessage} message an `ack` */
  _ack(message) {
    const pending = this._pending.get(String(message.id));
    if (!pending) return;
    this._pending.delete(String(message.id));
    clearTimeout(pending.timer);
    if (message.ok) {
      pending.resolve(/** @type {Ack} */ (message));
      return;
    }
    const error = message.error || {};
    pending.reject(new AgentError(mapApiCode(error.code), error.message || `${pending.type} refused`, { details: error }));
  }

  _takenOver() {
    this._wanted = false;
    clearTimeout(this._retryTimer);
    this._retryTimer = undefined;
    this._setState('closed', { reason: 'takeover' });
    this.emit('takeover');
  }

  /**
   * @param {AgentError} error
   * @param {boolean} authFailed the token was refused (a refresh may cure it)
   */
  _fail(error, authFailed) {
    this._wanted = false;
    this._setState('closed', { reason: error.code });
    this.emit(authFailed ? 'authFailed' : 'failed', error);
  }

  /** @param {any} [cause] an Error, or whatever the WebSocket constructor threw */
  _scheduleRetry(cause) {
    if (!this._wanted) return;
    const { initialMs, maxMs, factor } = this._backoff;
    const base = Math.min(maxMs, initialMs * factor ** this._attempt);
    const delay = Math.round(base * (0.5 + this._random() / 2));
    this._attempt += 1;
    this._setState('reconnecting', { attempt: this._attempt, delayMs: delay, cause: cause && cause.message });
    this._retryTimer = setTimeout(() => {
      this._retryTimer = undefined;
      if (this._wanted) this._connect();
    }, delay);
  }

  /**
   * Close the socket now; `retry`: as if the server had dropped it.
   * @param {number} code
   * @param {string} reason
   */
  _teardown(code, reason, retry = false) {
    const ws = this._ws;
    this._dropSocket();
    if (ws) {
      try { ws.close(code, reason); } catch { /* already closing */ }
    }
    if (retry && this._wanted) this._scheduleRetry(new Error(reason));
  }

  _dropSocket() {
    clearTimeout(this._openTimer);
    const ws = this._ws;
    this._ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onerror = null;
      ws.onclose = null;
    }
    for (const [id, pending] of this._pending) {
      clearTimeout(pending.timer);
      pending.reject(new AgentError(ErrorCodes.NOT_CONNECTED, `The agent channel closed before ${pending.type} was acknowledged.`));
      this._pending.delete(id);
    }
  }

  /**
   * @param {'idle' | import('../types/index.js').ConnectionState} state
   * @param {object} detail
   */
  _setState(state, detail) {
    const changed = state !== this.state;
    this.state = state;
    if (changed || state === 'reconnecting') this.emit('state', state, detail);
  }
}
