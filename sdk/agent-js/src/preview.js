/**
 * A preview offer (docs/agents.md `{"type": "offer", "kind": "preview", "offerId", "campaignId",
 * "contact", "timeoutSeconds"}`): an outbound campaign's contact, shown to this agent before
 * anything is dialled. `accept()` asks the dialer to call the contact for this agent (the
 * agent's phone rings when the customer answers); `skip()` gives the contact back to the
 * campaign. Without either, the server withdraws it after `timeoutSeconds` (reason `timeout`)
 * and the contact goes back.
 *
 * A separate event (`preview`) from queue offers (`offer`): a page that answers every `offer`
 * by itself must not dial customers it never looked at.
 *
 * Events: `ended` `{reason: 'accepted' | 'skipped' | 'timeout' | 'campaign_not_running' | 'cancelled'}`.
 */
import { Emitter } from './emitter.js';
import { AgentError, ErrorCodes } from './errors.js';

/** @typedef {import('../types/index.js').Ack} Ack */
/** @typedef {import('../types/index.js').PreviewContact} PreviewContact */
/** @typedef {import('../types/index.js').PreviewEnd} PreviewEnd */

/** @type {readonly PreviewEnd[]} */
const ENDS = Object.freeze(['accepted', 'skipped', 'timeout', 'campaign_not_running', 'cancelled']);

export class PreviewOffer extends Emitter {
  /**
   * @param {{offerId: string, campaignId?: string, contact?: PreviewContact, timeoutSeconds?: number}} message
   * @param {{accept: (offer: PreviewOffer) => Promise<Ack>, skip: (offer: PreviewOffer) => Promise<Ack>}} actions
   */
  constructor(message, actions) {
    super();
    this.id = message.offerId;
    /** @type {'preview'} */
    this.kind = 'preview';
    this.campaignId = message.campaignId ?? null;
    /** @type {PreviewContact} */
    this.contact = Object.freeze({
      id: message.contact?.id ?? '',
      name: message.contact?.name ?? null,
      phoneNumber: message.contact?.phoneNumber ?? '',
      attributes: Object.freeze({ ...(message.contact?.attributes || {}) }),
      attempts: message.contact?.attempts ?? 0,
    });
    this.timeoutSeconds = message.timeoutSeconds ?? null;
    this.receivedAt = Date.now();
    /** The customer's call id once accepted (the `accept` ack's `callId`). @type {string | null} */
    this.callId = null;
    /** @type {'offered' | 'answering' | PreviewEnd} */
    this.state = 'offered';
    this._actions = actions;
  }

  get pending() {
    return this.state === 'offered';
  }

  /**
   * Call this contact: the channel's `accept` for this offer. Resolves with the ack (its
   * `callId` is the customer's call, which the `call` events then name).
   * @returns {Promise<Ack>}
   */
  accept() {
    return this._answer('accepted', this._actions.accept);
  }

  /**
   * Do not call this contact now: the channel's `skip`; the campaign offers the next one.
   * @returns {Promise<Ack>}
   */
  skip() {
    return this._answer('skipped', this._actions.skip);
  }

  /**
   * @param {PreviewEnd} reason
   * @param {(offer: PreviewOffer) => Promise<Ack>} action
   * @returns {Promise<Ack>}
   */
  async _answer(reason, action) {
    if (!this.pending) throw new AgentError(ErrorCodes.COMMAND_FAILED, `The preview offer is ${this.state}.`);
    this.state = 'answering';
    try {
      const ack = await action(this);
      if (typeof ack.callId === 'string') this.callId = ack.callId;
      this._end(reason);
      return ack;
    } catch (err) {
      // the server refused (e.g. `no_offer`: it timed out meanwhile); a withdrawal may follow
      if (this.state === 'answering') this.state = 'offered';
      throw err;
    }
  }

  /**
   * @internal the offer is over
   * @param {PreviewEnd} reason
   */
  _end(reason) {
    if (ENDS.includes(/** @type {PreviewEnd} */ (this.state))) return;
    this.state = reason;
    this.emit('ended', { reason });
  }
}
