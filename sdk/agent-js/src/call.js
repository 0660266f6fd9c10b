/**
 * The agent's call. Phases (SPEC "Call phase"): `connecting` → `connected` → `ended`, in that
 * order and each once: the server's `call` messages and the media leg both feed `_phase`, and a
 * phase that is not ahead of the current one is ignored, so a page sees one clean sequence
 * whichever arrives first.
 *
 * Events: `phase` `{phase, cause?}`.
 */
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';

/** @typedef {import('../types/index.js').Ack} Ack */
/** @typedef {import('../types/index.js').CallPhase} CallPhase */
/** @typedef {{ok: true, local: true}} LocalOnly the channel is down; the media leg did it */

/** @type {readonly CallPhase[]} */
export const PHASES = Object.freeze(['connecting', 'connected', 'ended']);

export class Call extends Emitter {
  /**
   * @param {string} callId
   * @param {{offer?: import('./offer.js').Offer | null, control: (call: Call, type: string, fields?: Record<string, unknown>) => Promise<any>}} options
   */
  constructor(callId, { offer = null, control }) {
    super();
    this.id = callId;
    this.offer = offer;
    /** @type {'new' | CallPhase} */
    this.phase = 'new';
    /** @type {string | null} */
    this.cause = null;
    this.held = false;
    this.muted = false;
    /** @type {string | null} */
    this.disposition = null;
    /** @type {number | null} */
    this.connectedAt = null;
    /** @type {number | null} */
    this.endedAt = null;
    this._control = control;
    /** @type {any} the media leg's answered JsSIP session (set by the agent) */
    this._session = undefined;
  }

  /**
   * @internal
   * @param {CallPhase} phase
   * @param {string | null} [cause]
   * @returns {boolean} whether the phase moved forward
   */
  _phase(phase, cause) {
    if (PHASES.indexOf(phase) <= PHASES.indexOf(/** @type {CallPhase} */ (this.phase))) return false;
    this.phase = phase;
    if (phase === 'connected') this.connectedAt = Date.now();
    if (phase === 'ended') {
      this.endedAt = Date.now();
      this.cause = cause || this.cause || 'NORMAL_CLEARING';
    }
    this.emit('phase', { phase, cause: phase === 'ended' ? this.cause : undefined });
    return true;
  }

  get active() {
    return this.phase === 'connecting' || this.phase === 'connected';
  }

  /**
   * @param {string} action
   * @returns {Promise<never> | null} a rejection when the call is not active
   */
  _live(action) {
    if (!this.active) return Promise.reject(new AgentError(ErrorCodes.NO_CALL, `Cannot ${action}: the call is ${this.phase}.`));
    return null;
  }

  /** @returns {Promise<Ack | LocalOnly>} */
  hangup() { return this._live('hang up') || this._control(this, 'hangup'); }
  /** @returns {Promise<Ack>} */
  hold() { return this._live('hold') || this._control(this, 'hold'); }
  /** @returns {Promise<Ack>} */
  unhold() { return this._live('unhold') || this._control(this, 'unhold'); }
  /** @returns {Promise<Ack | LocalOnly>} */
  mute() { return this._live('mute') || this._control(this, 'mute'); }
  /** @returns {Promise<Ack | LocalOnly>} */
  unmute() { return this._live('unmute') || this._control(this, 'unmute'); }

  /**
   * @param {string} digits 0-9, *, #, A-D
   * @returns {Promise<Ack>}
   */
  sendDtmf(digits) {
    if (!/^[0-9*#A-Da-d]{1,32}$/.test(String(digits))) {
      return Promise.reject(new AgentError(ErrorCodes.COMMAND_FAILED, 'DTMF digits are 0-9, *, #, A-D (1 to 32).'));
    }
    return this._live('send DTMF') || this._control(this, 'dtmf', { digits: String(digits) });
  }

  /**
   * The disposition (after-call outcome), during the call or in wrap-up after it.
   * @param {string} code
   * @returns {Promise<Ack>}
   */
  async setDisposition(code) {
    const ack = await this._control(this, 'disposition', { code: String(code) });
    this.disposition = String(code);
    return ack;
  }
}
