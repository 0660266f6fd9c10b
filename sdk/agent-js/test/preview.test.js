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
  test('given a preview campaign, when the agent skips the first contact offered and accepts the other, then the other is dialled for the agent', async () => {
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
    // contacts imported together are offered in no set order (same import time): either first
    const people = {
      'Ada Lovelace': { phoneNumber: '+12125550101', attributes: { plan: 'gold' } },
      'Alan Turing': { phoneNumber: '+12125550102', attributes: {} },
    };
    const skipped = await first;
    assert.ok(skipped.contact.name in people, skipped.contact.name);
    assert.equal(skipped.contact.phoneNumber, people[skipped.contact.name].phoneNumber);
    assert.deepEqual({ ...skipped.contact.attributes }, people[skipped.contact.name].attributes);
    assert.equal(skipped.timeoutSeconds, 30);
    assert.equal(agent.preview, skipped);

    const second = next(agent, 'preview');
    const ended = next(skipped, 'ended');
    await skipped.skip();
    assert.equal((await ended).reason, 'skipped');
    const taken = await second;
    assert.notEqual(taken.contact.name, skipped.contact.name);
    assert.ok(taken.contact.name in people, taken.contact.name);

    const ack = await taken.accept();
    assert.equal(ack.ok, true);
    assert.equal(typeof ack.callId, 'string');
    assert.equal(taken.state, 'accepted');
    const originate = await eventually(async () => (await harness.events(tenant.accountId, 'call.originate'))
      .find((e) => e.payload.callId === ack.callId));
    assert.equal(originate.payload.agentId, tenant.agents[0].agentId);
    assert.equal(originate.payload.phoneNumber, people[taken.contact.name].phoneNumber.slice(1));
    assert.equal(queueOffers.length, 0);
    await agent.logout();
  });
});
