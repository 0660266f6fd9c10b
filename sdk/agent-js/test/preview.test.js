/**
 * Preview mode through the real stack: a preview campaign started over REST is paced by the
 * real `sbc workers` dialer, whose offers reach the SDK as `preview` events (never `offer`);
 * `skip()` gives the contact back and the next one is offered, `accept()` makes the dialer call
 * the contact for this agent (`call.originate` naming the agent and the ack's `callId`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Harness, eventually, next } from './support/harness.js';

let harness;

before(async () => { harness = await Harness.start(); });
after(() => harness && harness.stop());

describe('preview offers', () => {
  test('given a preview campaign, when the agent skips the first contact and accepts the second, then the second is dialled for the agent', async () => {
    const tenant = await harness.tenant({ agents: 1 });
    const agent = harness.agent(tenant);
    const queueOffers = [];
    agent.on('offer', (o) => queueOffers.push(o));
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    const available = next(agent, 'state', (s) => s.state === 'available');
    await agent.setState('available');
    await available;

    const first = next(agent, 'preview');
    await harness.campaign(tenant, {
      mode: 'preview',
      contacts: [
        { phone_number: '+12125550101', name: 'Ada Lovelace', attributes: { plan: 'gold' } },
        { phone_number: '+12125550102', name: 'Alan Turing' },
      ],
    });
    const ada = await first;
    assert.equal(ada.contact.name, 'Ada Lovelace');
    assert.equal(ada.contact.phoneNumber, '+12125550101');
    assert.deepEqual({ ...ada.contact.attributes }, { plan: 'gold' });
    assert.equal(ada.timeoutSeconds, 30);
    assert.equal(agent.preview, ada);

    const second = next(agent, 'preview');
    const ended = next(ada, 'ended');
    await ada.skip();
    assert.equal((await ended).reason, 'skipped');
    const alan = await second;
    assert.equal(alan.contact.name, 'Alan Turing');

    const ack = await alan.accept();
    assert.equal(ack.ok, true);
    assert.equal(typeof ack.callId, 'string');
    assert.equal(alan.state, 'accepted');
    const originate = await eventually(async () => (await harness.events(tenant.accountId, 'call.originate'))
      .find((e) => e.payload.callId === ack.callId));
    assert.equal(originate.payload.agentId, tenant.agents[0].agentId);
    assert.equal(originate.payload.phoneNumber, '12125550102');
    assert.equal(queueOffers.length, 0);
    await agent.logout();
  });
});
