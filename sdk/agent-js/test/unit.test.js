/**
 * The SDK's own rules, without a server: DTLS-SRTP offers only, call phases forward only and
 * once, offer outcomes, API error codes → SDK codes, JWT claims, channel backoff and takeover,
 * the single sign-on redirect page's URL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ssoParams } from '../src/agent.js';
import { Call } from '../src/call.js';
import { Channel, TAKEOVER_CLOSE_CODE } from '../src/channel.js';
import { ErrorCodes, createAgent, isDtlsSrtp } from '../src/index.js';
import { mapApiCode } from '../src/errors.js';
import { Offer } from '../src/offer.js';
import { PreviewOffer } from '../src/preview.js';
import { decodeClaims } from '../src/storage.js';

const sdp = (proto, fingerprint = true) => [
  'v=0', 'o=FreeSWITCH 1 2 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0',
  `m=audio 30000 ${proto} 8 101`, ...(fingerprint ? ['a=fingerprint:sha-256 AB:CD'] : []), 'a=setup:actpass', '',
].join('\r\n');

describe('DTLS-SRTP only', () => {
  test('given FreeSWITCH\'s WebRTC offer (RTP/SAVPF with a fingerprint), then it is accepted', () => {
    assert.equal(isDtlsSrtp(sdp('RTP/SAVPF')), true);
    assert.equal(isDtlsSrtp(sdp('UDP/TLS/RTP/SAVPF')), true);
  });
  test('given plain RTP or SRTP without a DTLS fingerprint, then it is refused', () => {
    assert.equal(isDtlsSrtp(sdp('RTP/AVP')), false);
    assert.equal(isDtlsSrtp(sdp('RTP/SAVPF', false)), false);
    assert.equal(isDtlsSrtp(''), false);
  });
});

describe('call phases', () => {
  test('given phases from two sources, then each is emitted once and in order', () => {
    const call = new Call('c1', { control: async () => ({}) });
    const seen = [];
    call.on('phase', ({ phase }) => seen.push(phase));
    for (const phase of ['connecting', 'connecting', 'connected', 'connecting', 'connected', 'ended', 'connected', 'ended']) {
      call._phase(phase, 'NORMAL_CLEARING');
    }
    assert.deepEqual(seen, ['connecting', 'connected', 'ended']);
    assert.equal(call.cause, 'NORMAL_CLEARING');
  });
  test('given an ended call, then call control is refused with no_call but a disposition is sent', async () => {
    const sent = [];
    const call = new Call('c1', { control: async (c, type) => { sent.push(type); return { ok: true }; } });
    call._phase('ended');
    await assert.rejects(call.hangup(), { code: ErrorCodes.NO_CALL });
    await assert.rejects(call.sendDtmf('1'), { code: ErrorCodes.NO_CALL });
    await call.setDisposition('sale');
    assert.deepEqual(sent, ['disposition']);
  });
  test('given a note, then setDisposition sends it with the code (a campaign contact keeps it) and omits it otherwise', async () => {
    const sent = [];
    const call = new Call('c1', { control: async (c, type, fields) => { sent.push([type, fields]); return { ok: true }; } });
    call._phase('ended');
    await call.setDisposition('callback_later', 'ring after 6');
    await call.setDisposition('sale');
    assert.deepEqual(sent, [['disposition', { code: 'callback_later', note: 'ring after 6' }], ['disposition', { code: 'sale' }]]);
    assert.equal(call.disposition, 'sale');
  });
  test('given a transfer, then the target goes to the server as is and a bad one is refused before it', async () => {
    const sent = [];
    const call = new Call('c1', { control: async (c, type, fields) => { sent.push([type, fields]); return { ok: true }; } });
    call._phase('connected');
    await call.transfer({ type: 'queue', name: 'billing' });
    await assert.rejects(call.transfer({ type: 'queue' }), { code: ErrorCodes.COMMAND_FAILED });
    await assert.rejects(call.transfer(/** @type {any} */ ({ type: 'pstn', number: '123' })), { code: ErrorCodes.COMMAND_FAILED });
    assert.deepEqual(sent, [['transfer', { target: { type: 'queue', name: 'billing' } }]]);
  });
  test('given an attended transfer, then consult, completeTransfer and cancelConsult go to the server and a queue cannot be consulted', async () => {
    const sent = [];
    const call = new Call('c1', { control: async (c, type, fields) => { sent.push([type, fields]); return { ok: true }; } });
    call._phase('connected');
    await call.consult({ type: 'agent', agentId: 'a2' });
    await call.cancelConsult();
    await call.consult({ type: 'sip', uri: 'sip:desk@pbx.example.com' });
    await call.completeTransfer();
    await assert.rejects(call.consult({ type: 'queue', name: 'billing' }), { code: ErrorCodes.COMMAND_FAILED });
    await assert.rejects(call.consult(/** @type {any} */ ({ type: 'number' })), { code: ErrorCodes.COMMAND_FAILED });
    assert.deepEqual(sent, [['consult', { target: { type: 'agent', agentId: 'a2' } }], ['cancelConsult', {}],
      ['consult', { target: { type: 'sip', uri: 'sip:desk@pbx.example.com' } }], ['completeTransfer', {}]]);
    call._phase('ended');
    await assert.rejects(call.completeTransfer(), { code: ErrorCodes.NO_CALL });
  });
  test('given a consultation, then swap goes to the server each time and not on an ended call', async () => {
    const sent = [];
    const call = new Call('c1', { control: async (c, type, fields) => { sent.push([type, fields]); return { ok: true }; } });
    call._phase('connected');
    await call.consult({ type: 'agent', agentId: 'a2' });
    await call.swap();
    await call.swap();
    assert.deepEqual(sent.map(([type]) => type), ['consult', 'swap', 'swap']);
    assert.deepEqual(sent[1], ['swap', {}]);
    call._phase('ended');
    await assert.rejects(call.swap(), { code: ErrorCodes.NO_CALL });
    assert.equal(sent.length, 3);
  });
  test('given a consultation, then conference, leave and endAll go to the server and not on an ended call', async () => {
    const sent = [];
    const call = new Call('c1', { control: async (c, type, fields) => { sent.push([type, fields]); return { ok: true }; } });
    call._phase('connected');
    await call.consult({ type: 'number', number: '+15550100' });
    await call.conference();
    await call.endAll();
    await call.leave();
    assert.deepEqual(sent, [['consult', { target: { type: 'number', number: '+15550100' } }], ['conference', {}],
      ['endAll', {}], ['leave', {}]]);
    call._phase('ended');
    await assert.rejects(call.conference(), { code: ErrorCodes.NO_CALL });
    await assert.rejects(call.leave(), { code: ErrorCodes.NO_CALL });
    await assert.rejects(call.endAll(), { code: ErrorCodes.NO_CALL });
  });
  test('given the server says transferred, then the call ends once with cause transferred and the target', () => {
    const call = new Call('c1', { control: async () => ({}) });
    const seen = [];
    call.on('phase', (e) => seen.push(e));
    call._phase('connected');
    call._transferred({ type: 'agent', agentId: 'a2' });
    call._phase('ended', 'NORMAL_CLEARING');
    assert.deepEqual(seen.map((e) => e.phase), ['connected', 'ended']);
    assert.equal(call.cause, 'transferred');
    assert.deepEqual(call.transferredTo, { type: 'agent', agentId: 'a2' });
  });
  test('given bad DTMF digits, then they are refused before the server', async () => {
    const call = new Call('c1', { control: async () => ({ ok: true }) });
    call._phase('connected');
    await assert.rejects(call.sendDtmf('12x'), { code: ErrorCodes.COMMAND_FAILED });
  });
});

describe('offers', () => {
  test('given an accepted offer, then it ends once as accepted and cannot be rejected', async () => {
    const offer = new Offer({ offerId: 'o1', queue: 'q', from: '+1555', timeoutSeconds: 20 },
      { accept: async () => 'call', reject: async () => 'rejected' });
    const ends = [];
    offer.on('ended', ({ reason }) => ends.push(reason));
    assert.equal(await offer.accept(), 'call');
    offer._end('missed');
    await assert.rejects(offer.reject(), { code: ErrorCodes.COMMAND_FAILED });
    assert.deepEqual(ends, ['accepted']);
  });
  test('given an accept the server refuses, then the offer is still ringing', async () => {
    const offer = new Offer({ offerId: 'o1' }, { accept: async () => { throw new Error('no_offer'); }, reject: async () => {} });
    await assert.rejects(offer.accept());
    assert.equal(offer.state, 'ringing');
  });
});

describe('preview offers', () => {
  const message = {
    offerId: 'p1', campaignId: 'c1', timeoutSeconds: 30,
    contact: { id: 'k1', name: 'Ada', phoneNumber: '+12125550101', attributes: { plan: 'gold' }, attempts: 1 },
  };

  test('given an accepted preview, then it ends once as accepted with the call id and cannot be skipped', async () => {
    const sent = [];
    const preview = new PreviewOffer(message, {
      accept: async (p) => { sent.push(['accept', p.id]); return { type: 'ack', id: '1', ok: true, callId: 'call-1' }; },
      skip: async (p) => { sent.push(['skip', p.id]); return { type: 'ack', id: '2', ok: true }; },
    });
    const ends = [];
    preview.on('ended', ({ reason }) => ends.push(reason));
    assert.equal(preview.kind, 'preview');
    assert.deepEqual(preview.contact, message.contact);
    assert.equal((await preview.accept()).callId, 'call-1');
    assert.equal(preview.callId, 'call-1');
    await assert.rejects(preview.skip(), { code: ErrorCodes.COMMAND_FAILED });
    preview._end('timeout');
    assert.deepEqual(ends, ['accepted']);
    assert.deepEqual(sent, [['accept', 'p1']]);
  });

  test('given a skip the server refuses (timed out meanwhile), then it is still offered until withdrawn', async () => {
    const preview = new PreviewOffer(message, {
      accept: async () => ({ type: 'ack', id: '1', ok: true }),
      skip: async () => { throw new Error('no_offer'); },
    });
    const ends = [];
    preview.on('ended', ({ reason }) => ends.push(reason));
    await assert.rejects(preview.skip());
    assert.equal(preview.state, 'offered');
    preview._end('timeout');
    assert.deepEqual(ends, ['timeout']);
    assert.equal(preview.pending, false);
  });

  test('given preview messages on the channel, then a preview event (never an offer) and the withdrawal ends it', () => {
    const agent = createAgent({ host: 'acme.example.com', media: false });
    const offers = [];
    const previews = [];
    agent.on('offer', (o) => offers.push(o));
    agent.on('preview', (p) => previews.push(p));
    agent._onOffer({ type: 'offer', kind: 'preview', phase: 'ringing', ...message });
    assert.equal(offers.length, 0);
    assert.equal(previews.length, 1);
    assert.equal(agent.preview, previews[0]);
    assert.equal(previews[0].contact.name, 'Ada');
    agent._onOffer({ type: 'offer', kind: 'preview', phase: 'withdrawn', offerId: 'p1', reason: 'timeout' });
    assert.equal(previews[0].state, 'timeout');
    assert.equal(agent.preview, null);
  });
});

describe('consult offers (attended transfer)', () => {
  const consult = { type: 'offer', kind: 'consult', phase: 'ringing', offerId: 'call-1', callId: 'call-1',
    fromAgentId: 'agent-a', from: '+15551230000', to: '+15557654321', timeoutSeconds: 30 };
  /** An agent whose channel records the commands it is sent and acks them. */
  function consultedAgent() {
    const agent = createAgent({ host: 'acme.example.com', media: false });
    const sent = [];
    agent.channel = /** @type {any} */ ({ isOpen: true, command: async (type, fields) => { sent.push([type, fields]); return { ok: true }; } });
    const offers = [];
    agent.on('offer', (o) => offers.push(o));
    agent._onOffer(consult);
    return { agent, sent, offer: offers[0] };
  }

  test('given a consult offer, when accepted and the transfer completes, then the call is connected and hangs up through the channel', async () => {
    const { agent, sent, offer } = consultedAgent();
    assert.deepEqual([offer.kind, offer.fromAgentId, offer.from, offer.to, offer.queue], ['consult', 'agent-a', '+15551230000', '+15557654321', null]);
    const call = await offer.accept();
    assert.deepEqual(sent[0], ['accept', { offerId: 'call-1' }]);
    assert.equal(call.phase, 'connecting');
    agent._onCall({ type: 'call', phase: 'connected', callId: 'call-1' });  // agent.accept at the completion
    assert.equal(agent.call, call);
    assert.equal(call.phase, 'connected');
    await call.hangup();
    assert.deepEqual(sent[1], ['hangup', {}]);
    await call.setDisposition('resolved');
    assert.deepEqual(sent[2], ['disposition', { code: 'resolved', callId: 'call-1' }]);
  });

  test('given an accepted consult offer, when the consultation is cancelled, then the connecting call ends cancelled', async () => {
    const { agent, offer } = consultedAgent();
    const call = await offer.accept();
    agent._onOffer({ type: 'offer', kind: 'consult', phase: 'withdrawn', offerId: 'call-1', reason: 'cancelled', cause: null });
    assert.deepEqual([call.phase, call.cause, agent.call], ['ended', 'cancelled', null]);
  });

  test('given a ringing consult offer, when rejected, then the server is asked first, the ringing leg declined after and it ends rejected', async () => {
    const { agent, sent, offer } = consultedAgent();
    const order = [];
    agent.media = /** @type {any} */ ({ ringing: true, decline: () => order.push('decline'), stop() {} });
    const command = agent.channel.command;
    agent.channel.command = async (type, fields) => { order.push(type); return command(type, fields); };
    const ended = new Promise((resolve) => offer.on('ended', resolve));
    const ack = await offer.reject();
    assert.equal(ack.ok, true);
    assert.deepEqual(sent, [['reject', { offerId: 'call-1' }]]);
    assert.deepEqual(order, ['reject', 'decline']);  // declining first would end it missed, not rejected
    assert.deepEqual([(await ended).reason, offer.state, agent.offer], ['rejected', 'rejected', null]);
    agent._onOffer({ type: 'offer', kind: 'consult', phase: 'withdrawn', offerId: 'call-1', reason: 'rejected', cause: null });
    assert.equal(offer.state, 'rejected');  // once
    await assert.rejects(offer.accept(), { code: ErrorCodes.COMMAND_FAILED });
  });

  test('given a consulting agent, when its consultation fails, then the call and the agent emit consult failed with the reason', async () => {
    const agent = createAgent({ host: 'acme.example.com', media: false });
    const call = agent._newCall('call-9', null);
    call._phase('connected');
    const onCall = [];
    const onAgent = [];
    call.on('consult', (e) => onCall.push(e));
    agent.on('consult', (e) => onAgent.push(e));
    const to = { type: 'agent', agentId: 'agent-b' };
    agent._dispatch({ type: 'consult', phase: 'failed', callId: 'call-9', to, reason: 'rejected', at: 'now' });
    assert.deepEqual(onCall, [{ phase: 'failed', reason: 'rejected', to }]);
    assert.deepEqual(onAgent, [{ phase: 'failed', reason: 'rejected', to, callId: 'call-9', call }]);
    assert.equal(call.phase, 'connected');  // the agent has its caller again
  });

  test('given a ringing consult offer, when it is withdrawn cancelled, then it ends cancelled', () => {
    const { agent, offer } = consultedAgent();
    agent._onOffer({ type: 'offer', kind: 'consult', phase: 'withdrawn', offerId: 'call-1', reason: 'cancelled', cause: null });
    assert.deepEqual([offer.state, agent.offer], ['cancelled', null]);
  });
});

describe('error codes', () => {
  test('then API codes map onto the SDK\'s stable codes and unknown ones pass through', () => {
    assert.equal(mapApiCode('invalid_credentials', 401), ErrorCodes.BAD_CREDENTIALS);
    assert.equal(mapApiCode('license_required', 403), ErrorCodes.LICENSE_MISSING);
    assert.equal(mapApiCode('token_expired', 401), ErrorCodes.BAD_TOKEN);
    assert.equal(mapApiCode('no_offer'), 'no_offer');
    assert.equal(mapApiCode(undefined, 503), ErrorCodes.SERVER_ERROR);
  });
});

test('then a JWT\'s claims are read without verifying it', () => {
  const body = Buffer.from(JSON.stringify({ exp: 2000000000, iat: 1999999000, session: 'agent' })).toString('base64url');
  assert.deepEqual(decodeClaims(`x.${body}.y`), { exp: 2000000000, iat: 1999999000, session: 'agent' });
  assert.equal(decodeClaims('not a token'), null);
});

/** A WebSocket double that the test drives (the channel's contract with any WebSocket). */
class FakeSocket {
  static made = [];
  constructor(url) { this.url = url; this.sent = []; FakeSocket.made.push(this); }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() {}
  open() { this.onopen && this.onopen(); }
  message(body) { this.onmessage && this.onmessage({ data: JSON.stringify(body) }); }
  drop(code) { this.onclose && this.onclose({ code, reason: '' }); }
}

describe('channel', () => {
  test('given drops, then it reconnects with doubling, jittered delays and sends auth first each time', async () => {
    FakeSocket.made = [];
    const channel = new Channel({ url: 'ws://x/', WebSocket: FakeSocket, token: () => 'jwt',
      backoff: { initialMs: 10, maxMs: 40, factor: 2 }, random: () => 1 });
    const delays = [];
    channel.on('state', (state, detail) => { if (detail && detail.delayMs) delays.push(detail.delayMs); });
    channel.open();
    for (let n = 0; n < 4; n += 1) {
      const socket = FakeSocket.made.at(-1);
      socket.open();
      assert.deepEqual(socket.sent[0], { type: 'auth', token: 'jwt' });
      socket.drop(1006);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(delays, [10, 20, 40, 40]);
    channel.close();
  });

  test('given close 4001, then takeover is emitted and nothing reconnects', async () => {
    FakeSocket.made = [];
    const channel = new Channel({ url: 'ws://x/', WebSocket: FakeSocket, token: () => 'jwt', backoff: { initialMs: 5, maxMs: 5, factor: 2 } });
    let takenOver = 0;
    channel.on('takeover', () => { takenOver += 1; });
    channel.open();
    FakeSocket.made[0].open();
    FakeSocket.made[0].message({ type: 'connection', state: 'open' });
    FakeSocket.made[0].drop(TAKEOVER_CLOSE_CODE);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(takenOver, 1);
    assert.equal(FakeSocket.made.length, 1);
    assert.equal(channel.state, 'closed');
  });

  test('given a command when the socket drops, then it fails with not_connected', async () => {
    FakeSocket.made = [];
    const channel = new Channel({ url: 'ws://x/', WebSocket: FakeSocket, token: () => 'jwt' });
    channel.open();
    FakeSocket.made[0].open();
    FakeSocket.made[0].message({ type: 'connection', state: 'open' });
    const pending = channel.command('setState', { state: 'available' });
    assert.equal(FakeSocket.made[0].sent[1].type, 'setState');
    FakeSocket.made[0].drop(1006);
    await assert.rejects(pending, { code: ErrorCodes.NOT_CONNECTED });
    channel.close();
  });
});

describe('single sign-on redirect page', () => {
  test('given the page URL as location.href, location.search or a bare query, then code and state are read alike', () => {
    const expected = { code: 'c/1+x', state: 's1', error: undefined };
    assert.deepEqual(ssoParams('https://acme.example.com/agent/sso?code=c%2F1%2Bx&state=s1&iss=https%3A%2F%2Fidp#top'), expected);
    assert.deepEqual(ssoParams('?code=c%2F1%2Bx&state=s1'), expected);
    assert.deepEqual(ssoParams('code=c%2F1%2Bx&state=s1'), expected);
  });
  test('given the provider refused, then its error is read and there is no code', () => {
    assert.deepEqual(ssoParams('/agent/sso?error=access_denied&state=s1'), { code: undefined, state: 's1', error: 'access_denied' });
  });
});
