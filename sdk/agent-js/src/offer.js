/**
 * An offer (docs/agents.md `{"type": "offer", "offerId", "queue", "from", "timeoutSeconds"}`):
 * a queued caller is ringing this agent (`kind` `queue`), or another agent consults this one in
 * an attended transfer (`kind` `consult`: `fromAgentId` is the consulting agent, `from`/`to` the
 * caller's numbers; the call it becomes is the caller's once the transfer completes).
 * `accept()` or `reject()` once (a consultation rejected while it rings gives the consulting
 * agent its caller back and tells it `rejected`); without either it ends as `missed` when the
 * server (or the ring timer) says so.
 *
 * Events: `ended` `{reason: 'accepted' | 'rejected' | 'missed' | 'cancelled', cause?}`.
 */
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';

/** @typedef {import('../types/index.js').Ack} Ack */
/** @typedef {import('../types/index.js').OfferEnd} OfferEnd */

export class Offer extends Emitter {
  /**
   * @param {{offerId: string, kind?: string, queue?: string, from?: string, to?: string, fromAgentId?: string, timeoutSeconds?: number}} message
   * @param {{accept: (offer: Offer) => Promise<import('./call.js').Call>, reject: (offer: Offer) => Promise<Ack>}} actions
   */
  constructor(message, actions) {
    super();
    this.id = message.offerId;
    /** @type {'queue' | 'consult'} */
    this.kind = message.kind === 'consult' ? 'consult' : 'queue';
    /** @type {string | null} the consulting agent (kind `consult`) */
    this.fromAgentId = message.fromAgentId ?? null;
    /** @type {string | null} the number the caller dialled (kind `consult`) */
    this.to = message.to ?? null;
    this.queue = message.queue ?? null;
    this.from = message.from ?? null;
    this.timeoutSeconds = message.timeoutSeconds ?? null;
    this.receivedAt = Date.now();
    /** @type {'ringing' | 'accepting' | OfferEnd} */
    this.state = 'ringing';
    this._actions = actions;
  }

  get pending() {
    return this.state === 'ringing';
  }

  /** Take the call: the channel's `accept`, and the media leg answers its ring. */
  async accept() {
    if (!this.pending) throw new AgentError(ErrorCodes.COMMAND_FAILED, `The offer is ${this.state}.`);
    this.state = 'accepting';
    try {
      const result = await this._actions.accept(this);
      this._end('accepted');
      return result;
    } catch (err) {
      if (this.state === 'accepting') this.state = 'ringing';
      throw err;
    }
  }

  /**
   * Decline: the channel's `reject` (a queue offer: agent.reject, not counted as a miss; a
   * consultation: withdrawn `rejected`, the consulting agent has its caller back).
   */
  async reject() {
    if (!this.pending) throw new AgentError(ErrorCodes.COMMAND_FAILED, `The offer is ${this.state}.`);
    this._end('rejected');
    return this._actions.reject(this);
  }

  /**
   * @internal the offer went away without an answer
   * @param {OfferEnd} reason
   * @param {string | null} [cause]
   */
  _end(reason, cause) {
    if (this.state === reason || ['accepted', 'rejected', 'missed', 'cancelled'].includes(this.state)) return;
    this.state = reason;
    this.emit('ended', { reason, cause });
  }
}
