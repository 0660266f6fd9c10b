/**
 * State, offers and calls through the real agent channel: the API relays the bus events of a
 * simulated queue call (tests/sdk/harness.py) to the SDK, whose commands go back over the
 * channel. In node there is no WebRTC leg: the harness's RingingPhone plays the agent's phone
 * and the test answers it when the agent accepts, as the SDK's media leg does in a browser.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ErrorCodes } from '../src/index.js';
import { Harness, eventually, next } from './support/harness.js';
import { localFetch } from './support/transport.js';

let harness;

before(async () => { harness = await Harness.start(); });
after(() => harness && harness.stop());

/** A fresh tenant with one agent who is logged in through the SDK and available. */
async function availableAgent(options = {}) {
  const tenant = await harness.tenant({ agents: 1, offerTimeoutSeconds: options.offerTimeoutSeconds || 4, wrapUpSeconds: 1 });
  const agent = harness.agent(tenant);
  const { username, password } = tenant.agents[0];
  await agent.login(username, password);
  const available = next(agent, 'state', (s) => s.state === 'available');
  await agent.setState('available');
  await available;
  return { tenant, agent };
}

async function adminPut(tenant, path, body) {
  const login = await localFetch(`http://${tenant.host}/auth/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: tenant.admin.username, password: tenant.admin.password }),
  });
  const { token } = await login.json();
  const response = await localFetch(`http://${tenant.host}${path}`, {
    method: 'PUT', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
}

describe('state', () => {
  test('when the agent sets a state with a reason, then the ack and the relayed state event agree', async () => {
    const tenant = await harness.tenant({ agents: 1 });
    const agent = harness.agent(tenant);
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    const relayed = next(agent, 'state', (s) => s.state === 'not_ready');
    const ack = await agent.setState('not_ready', 'lunch');
    assert.equal(ack.ok, true);
    const event = await relayed;
    assert.equal(event.reason, 'lunch');
    assert.equal(event.previousState, 'offline');
    assert.deepEqual(agent.state.state, 'not_ready');
    await agent.logout();
  });

  test('when an admin changes the agent state over REST, then the agent sees it', async () => {
    const tenant = await harness.tenant({ agents: 1 });
    const agent = harness.agent(tenant);
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    const seen = next(agent, 'state', (s) => s.state === 'available');
    await adminPut(tenant, `/api/agents/${tenant.agents[0].agentId}/state`, { state: 'available' });
    assert.equal((await seen).state, 'available');
    await agent.logout();
  });

  test('given an unknown state, then setState rejects without asking the server', async () => {
    const tenant = await harness.tenant({ agents: 1 });
    const agent = harness.agent(tenant);
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    await assert.rejects(agent.setState('busy'), { code: ErrorCodes.COMMAND_FAILED });
    await agent.logout();
  });
});

describe('offers and calls', () => {
  test('given an available agent, when a caller queues and the agent accepts, then connecting, connected and ended follow in order', async () => {
    const { tenant, agent } = await availableAgent();
    const phases = [];
    const states = [];
    agent.on('call', ({ phase }) => phases.push(phase));
    agent.on('state', ({ state }) => states.push(state));
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    const offer = await offered;
    assert.equal(offer.id, callId);
    assert.equal(offer.queue, tenant.queue.name);
    assert.equal(offer.timeoutSeconds, 4);
    const connected = next(agent, 'call', (c) => c.phase === 'connected');
    const call = await offer.accept();
    assert.equal(call.phase, 'connecting');
    await harness.phone(callId, 'answer'); // the agent's endpoint picks up
    await connected;
    const ended = next(agent, 'call', (c) => c.phase === 'ended');
    await harness.phone(callId, 'hangup');
    const end = await ended;
    assert.deepEqual(phases, ['connecting', 'connected', 'ended']);
    assert.equal(end.callId, callId);
    assert.equal(offer.state, 'accepted');
    // after the call: wrap-up, then available again (queue wrap_up_seconds = 1)
    await eventually(() => states.join(',') === 'wrap_up,available');
    await agent.logout();
  });

  test('given a connected call, when the agent hangs up, then the call ends', async () => {
    const { tenant, agent } = await availableAgent();
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    const offer = await offered;
    const connected = next(agent, 'call', (c) => c.phase === 'connected');
    const call = await offer.accept();
    await harness.phone(callId, 'answer');
    await connected;
    const ended = next(agent, 'call', (c) => c.phase === 'ended');
    await call.hangup();
    assert.equal((await ended).callId, callId);
    await agent.logout();
  });

  test('given a connected call, then mute and unmute are echoed as media events', async () => {
    const { tenant, agent } = await availableAgent();
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    const call = await (await offered).accept();
    const connected = next(agent, 'call', (c) => c.phase === 'connected');
    await harness.phone(callId, 'answer');
    await connected;
    const muted = next(agent, 'media', (m) => m.state === 'muted');
    await call.mute();
    await muted;
    assert.equal(call.muted, true);
    const unmuted = next(agent, 'media', (m) => m.state === 'connected');
    await call.unmute();
    await unmuted;
    await harness.phone(callId, 'hangup');
    await agent.logout();
  });

  test('when the agent rejects an offer, then it ends rejected, agent.reject is published and no miss is counted', async () => {
    const { tenant, agent } = await availableAgent();
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    const offer = await offered;
    const ended = new Promise((resolve) => offer.on('ended', resolve));
    await offer.reject();
    assert.equal((await ended).reason, 'rejected');
    const keys = await eventually(async () => {
      const events = await harness.events(tenant.accountId, 'agent.');
      const found = events.filter((e) => e.payload.callId === callId).map((e) => e.key);
      return found.includes('agent.reject') && found;
    });
    assert.equal(keys.includes('agent.missed'), false);
    await harness.callerHangup(callId);
    await agent.logout();
  });

  test('when the offer rings out, then it ends missed with the cause', async () => {
    const { tenant, agent } = await availableAgent({ offerTimeoutSeconds: 2 });
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    const offer = await offered;
    const end = await new Promise((resolve) => offer.on('ended', resolve));
    assert.equal(end.reason, 'missed');
    assert.equal(end.cause, 'NO_ANSWER');
    assert.equal(offer.state, 'missed');
    await harness.callerHangup(callId);
    await agent.logout();
  });

  test('when the caller hangs up while the agent rings, then the offer ends caller_left', async () => {
    const { tenant, agent } = await availableAgent({ offerTimeoutSeconds: 10 });
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    const offer = await offered;
    const ended = new Promise((resolve) => offer.on('ended', resolve));
    await harness.callerHangup(callId);
    assert.equal((await ended).reason, 'caller_left');
    await agent.logout();
  });

  test('given an ended call, then the disposition is accepted in wrap-up', async () => {
    const { tenant, agent } = await availableAgent();
    const offered = next(agent, 'offer');
    const { callId } = await harness.call(tenant.number);
    await (await offered).accept();
    const connected = next(agent, 'call', (c) => c.phase === 'connected');
    await harness.phone(callId, 'answer');
    await connected;
    const ended = next(agent, 'call', (c) => c.phase === 'ended');
    await harness.phone(callId, 'hangup');
    await ended;
    const ack = await agent.setDisposition('sale');
    assert.equal(ack.ok, true);
    await agent.logout();
  });
});

describe('attended transfer', () => {
  test('when the consulted agent rejects the consult offer, then the consulting agent is told rejected, keeps its caller and can consult it again', async () => {
    const tenant = await harness.tenant({ agents: 2, offerTimeoutSeconds: 6, wrapUpSeconds: 1 });
    const agents = [];
    for (const { username, password } of tenant.agents) {
      const agent = harness.agent(tenant);
      await agent.login(username, password);
      const available = next(agent, 'state', (s) => s.state === 'available');
      await agent.setState('available');
      await available;
      agents.push(agent);
    }
    const { callId } = await harness.call(tenant.number, { consults: 2 });
    const first = await Promise.race(agents.map((a) => next(a, 'offer').then(() => a)));
    const other = agents.find((a) => a !== first);
    const connected = next(first, 'call', (c) => c.phase === 'connected');
    const call = await first.offer.accept();
    await harness.phone(callId, 'answer');
    await connected;

    const consultOffer = next(other, 'offer', (o) => o.kind === 'consult');
    await call.consult({ type: 'agent', agentId: other.agentId });
    const offer = await consultOffer;
    assert.deepEqual([offer.id, offer.fromAgentId], [callId, first.agentId]);
    const failed = next(call, 'consult');
    const ended = new Promise((resolve) => offer.on('ended', resolve));
    const ack = await offer.reject();
    assert.deepEqual([ack.ok, ack.kind], [true, 'consult']);
    assert.equal((await ended).reason, 'rejected');
    assert.deepEqual(await failed, { phase: 'failed', reason: 'rejected', to: { type: 'agent', agentId: other.agentId } });
    assert.equal(call.phase, 'connected');
    await eventually(async () => {
      const events = await harness.events(tenant.accountId, 'agent.consult.');
      return events.some((e) => e.key === 'agent.consult.withdrawn' && e.payload.reason === 'rejected');
    });

    // the rejecting agent is free again: a second consultation rings it
    const again = next(other, 'offer', (o) => o.kind === 'consult');
    await eventually(async () => {
      try { return await call.consult({ type: 'agent', agentId: other.agentId }); } catch (err) {
        if (err.code === 'consult_target_busy' || err.code === 'consult_in_progress') return false;
        throw err;
      }
    });
    await again;
    await call.cancelConsult();
    await harness.callerHangup(callId);
    for (const agent of agents) await agent.logout();
  });
});

describe('supervisor', () => {
  test('when a supervisor starts and stops listening to the agent, then supervisor events say so', async () => {
    const { tenant, agent } = await availableAgent();
    const started = next(agent, 'supervisor', (s) => s.active === true);
    const { supervisorId } = await harness.supervision({ accountId: tenant.accountId, agentId: tenant.agents[0].agentId,
      callId: 'call-under-supervision', mode: 'listen', active: true });
    const start = await started;
    assert.equal(start.mode, 'listen');
    assert.equal(start.supervisorId, supervisorId);
    assert.equal(start.callId, 'call-under-supervision');
    const stopped = next(agent, 'supervisor', (s) => s.active === false);
    await harness.supervision({ accountId: tenant.accountId, agentId: tenant.agents[0].agentId,
      callId: 'call-under-supervision', mode: 'listen', active: false });
    assert.equal((await stopped).event, 'call.control.stop');
    await agent.logout();
  });
});

describe('one session per agent', () => {
  test('when the same agent logs in elsewhere, then the older session gets takeover and does not reconnect', async () => {
    const tenant = await harness.tenant({ agents: 1 });
    const { username, password } = tenant.agents[0];
    const first = harness.agent(tenant);
    await first.login(username, password);
    const takenOver = next(first, 'takeover');
    const errored = next(first, 'error', (e) => e.code === ErrorCodes.TAKEOVER);
    const second = harness.agent(tenant);
    await second.login(username, password);
    await takenOver;
    await errored;
    assert.equal(first.connection, 'closed');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(first.connection, 'closed'); // no reconnect fight
    assert.equal(second.connection, 'open');
    await second.setState('not_ready');
    await second.logout();
  });
});

describe('reconnect', () => {
  test('when the API restarts, then the channel reconnects with backoff and the state is resynced', async () => {
    const tenant = await harness.tenant({ agents: 1 });
    const agent = harness.agent(tenant);
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    await agent.setState('not_ready', 'before restart');
    const states = [];
    agent.on('connection', (c) => states.push(c.state));
    const reopened = next(agent, 'connection', (c) => c.state === 'open', 60000);
    const resynced = next(agent, 'state', (s) => s.state === 'not_ready' && s.reason === 'before restart', 60000);
    await harness.restartApi();
    const open = await reopened;
    assert.equal(open.resumed, true);
    assert.ok(states.includes('reconnecting'), states.join(','));
    await resynced;
    const available = next(agent, 'state', (s) => s.state === 'available');
    await agent.setState('available');
    await available;
    await agent.logout();
  });
});
