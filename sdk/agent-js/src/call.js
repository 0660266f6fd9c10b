/**
 * The agent's call. Phases (SPEC "Call phase"): `connecting` → `connected` → `ended`, in that
 * order and each once: the server's `call` messages and the media leg both feed `_phase`, and a
 * phase that is not ahead of the current one is ignored, so a page sees one clean sequence
 * whichever arrives first.
 *
 * Events: `phase` `{phase, cause?}`; `consult` `{phase: 'failed', reason, to}` when this agent's
 * consultation ended without its asking (`rejected` by the consulted agent, or `missed`): it
 * has its caller again. A blind or a completed attended transfer ends the call for this agent:
 * phase `ended` with cause `transferred` and `transferredTo` set to the target.
 */
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';

/** @typedef {import('../types/index.js').Ack} Ack */
/** @typedef {import('../types/index.js').CallPhase} CallPhase */
/** @typedef {import('../types/index.js').TransferTarget} TransferTarget */
/** @typedef {{ok: true, local: true}} LocalOnly the channel is down; the media leg did it */

/** @type {readonly CallPhase[]} */
export const PHASES = Object.freeze(['connecting', 'connected', 'ended']);

/** @type {Record<string, string[]>} the field naming each kind of transfer target */
const TRANSFER_FIELDS = { agent: ['agentId'], queue: ['name'], number: ['number'], sip: ['uri'] };

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
    /** @type {TransferTarget | null} where a blind transfer sent the caller */
    this.transferredTo = null;
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
   * Blind transfer: the caller goes to `target` and this agent's leg is hung up (docs/agents.md
   * "Transfers"). The ack comes once the switch acted; the call then ends with cause `transferred`.
   * @param {TransferTarget} target `{type: 'agent', agentId}`, `{type: 'queue', name}`,
   *   `{type: 'number', number, callerId?}` or `{type: 'sip', uri}`
   * @returns {Promise<Ack>}
   */
  transfer(target) {
    const fields = TRANSFER_FIELDS[target && target.type];
    if (!fields || typeof (/** @type {any} */ (target))[fields[0]] !== 'string') {
      return Promise.reject(new AgentError(ErrorCodes.COMMAND_FAILED,
        'A transfer target is {type: agent, agentId} | {type: queue, name} | {type: number, number} | {type: sip, uri}.'));
    }
    return this._live('transfer') || this._control(this, 'transfer', { target });
  }

  /**
   * Attended transfer, first step: the caller holds (the queue's music) and this agent's phone
   * is connected to `target` once it answers (docs/agents.md "Attended transfers"). Then
   * `completeTransfer()`, `cancelConsult()` or `swap()`; if the consulted party hangs up, does
   * not answer or (an agent) rejects, the agent has its caller again and the call emits
   * `consult` `{phase: 'failed', reason: 'missed' | 'rejected', to}`. A busy agent target is refused (`consult_target_busy`); a second
   * consultation may follow a cancelled one.
   * @param {TransferTarget} target `{type: 'agent', agentId}`, `{type: 'number', number, callerId?}`
   *   or `{type: 'sip', uri}` (a queue cannot be consulted)
   * @returns {Promise<Ack>}
   */
  consult(target) {
    const fields = TRANSFER_FIELDS[target && target.type];
    if (!fields || target.type === 'queue' || typeof (/** @type {any} */ (target))[fields[0]] !== 'string') {
      return Promise.reject(new AgentError(ErrorCodes.COMMAND_FAILED,
        'A consultation target is {type: agent, agentId} | {type: number, number} | {type: sip, uri}.'));
    }
    return this._live('consult') || this._control(this, 'consult', { target });
  }

  /**
   * Attended transfer, done: the caller is connected to the consulted party (who must have
   * answered) and this agent's leg is hung up; the call ends with cause `transferred`.
   * @returns {Promise<Ack>}
   */
  completeTransfer() {
    return this._live('complete a transfer') || this._control(this, 'completeTransfer', {});
  }

  /**
   * Attended transfer, abandoned: the consulted party is hung up and this agent has its caller again.
   * @returns {Promise<Ack>}
   */
  cancelConsult() {
    return this._live('cancel a consultation') || this._control(this, 'cancelConsult', {});
  }

  /**
   * Attended transfer, toggling: while consulting (the consulted party has answered), talk to
   * the caller again while the consulted party holds with music; call again to go back to the
   * consulted party (the caller holds). `completeTransfer()` and `cancelConsult()` work from
   * either side.
   * @returns {Promise<Ack>}
   */
  swap() {
    return this._live('swap') || this._control(this, 'swap', {});
  }

  /**
   * Three-way call: while consulting (the consulted party has answered), add it to a call with
   * the caller (docs/agents.md "Three-way calls"). Then `leave()` or `endAll()`.
   * @returns {Promise<Ack>}
   */
  conference() {
    return this._live('start a three-way call') || this._control(this, 'conference', {});
  }

  /**
   * Three-way call: this agent leaves (its leg is hung up); the caller and the other party stay connected.
   * @returns {Promise<Ack>}
   */
  leave() {
    return this._live('leave a three-way call') || this._control(this, 'leave', {});
  }

  /**
   * Three-way call: everyone is hung up.
   * @returns {Promise<Ack>}
   */
  endAll() {
    return this._live('end a three-way call') || this._control(this, 'endAll', {});
  }

  /**
   * @internal the server's `call` phase `transferred`: the call is over for this agent
   * @param {TransferTarget | null} to
   */
  _transferred(to) {
    this.transferredTo = to;
    this._phase('ended', 'transferred');
  }

  /**
   * The disposition (after-call outcome), during the call or in wrap-up after it. On a
   * campaign call the server also records it (and `note`) on the campaign contact the call
   * dialled; its ack then carries `campaignId` and `contactId` (docs/agents.md).
   * @param {string} code
   * @param {string} [note] kept on the campaign contact (ignored for other calls)
   * @returns {Promise<Ack>}
   */
  async setDisposition(code, note) {
    const fields = note === undefined ? { code: String(code) } : { code: String(code), note: String(note) };
    const ack = await this._control(this, 'disposition', fields);
    this.disposition = String(code);
    return ack;
  }
}
