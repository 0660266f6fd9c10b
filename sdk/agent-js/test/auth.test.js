/**
 * Login, exchange, token storage and refresh against the real API process (tests/sdk/harness.py).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN_KEY, AGENT_TOKEN_KEY, ErrorCodes, memoryStorage } from '../src/index.js';
import { decodeClaims } from '../src/storage.js';
import { Harness, next } from './support/harness.js';
import { localFetch } from './support/transport.js';

let harness;
let tenant;

before(async () => {
  harness = await Harness.start();
  tenant = await harness.tenant({ agents: 2 });
});
after(() => harness && harness.stop());

describe('login', () => {
  test('given the right password, then the channel opens with the agent id and the current state', async () => {
    const agent = harness.agent(tenant);
    const stateEvent = next(agent, 'state');
    const grant = await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    assert.equal(grant.session, 'agent');
    assert.equal(agent.agentId, tenant.agents[0].agentId);
    assert.equal(agent.connection, 'open');
    assert.equal((await stateEvent).state, 'offline');
    await agent.logout();
  });

  test('given a wrong password, then login rejects with bad_credentials and an error event', async () => {
    const agent = harness.agent(tenant);
    const errors = [];
    agent.on('error', (err) => errors.push(err.code));
    await assert.rejects(agent.login(tenant.agents[0].username, 'wrong password'), { code: ErrorCodes.BAD_CREDENTIALS });
    assert.deepEqual(errors, [ErrorCodes.BAD_CREDENTIALS]);
    assert.equal(agent.token, null);
  });

  test('given a user without an agent profile, then login rejects with session_not_allowed', async () => {
    const bare = await harness.tenant({ licenses: ['api-access'] });
    const agent = harness.agent(bare);
    await assert.rejects(agent.login(bare.admin.username, bare.admin.password), { code: ErrorCodes.SESSION_NOT_ALLOWED });
  });

  test('given an account without the queue-mgmt license, then the channel refuses with license_missing and no reconnect', async () => {
    const unlicensed = await harness.tenant({ agents: 1 });
    await harness.licenses(unlicensed.accountId, ['api-access']);
    const agent = harness.agent(unlicensed);
    const errors = [];
    agent.on('error', (err) => errors.push(err.code));
    await assert.rejects(agent.login(unlicensed.agents[0].username, unlicensed.agents[0].password),
      { code: ErrorCodes.LICENSE_MISSING });
    assert.deepEqual(errors, [ErrorCodes.LICENSE_MISSING]);
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(agent.connection, 'closed');
  });

  test('then the agent token is stored under its own key and the admin key is left alone', async () => {
    const storage = memoryStorage();
    storage.setItem(ADMIN_TOKEN_KEY, 'admin-ui-token');
    const agent = harness.agent(tenant, { storage });
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    assert.equal(storage.getItem(AGENT_TOKEN_KEY), agent.token);
    assert.equal(storage.getItem(ADMIN_TOKEN_KEY), 'admin-ui-token');
    assert.equal(decodeClaims(agent.token).session, 'agent');
    await agent.logout();
    assert.equal(storage.getItem(AGENT_TOKEN_KEY), null);
  });

  test('given a stored agent token, then restore() reconnects without a password', async () => {
    const storage = memoryStorage();
    const first = harness.agent(tenant, { storage });
    await first.login(tenant.agents[1].username, tenant.agents[1].password);
    first._stop(); // the page was closed: the token stays in storage
    const second = harness.agent(tenant, { storage });
    assert.equal(await second.restore(), true);
    assert.equal(second.agentId, tenant.agents[1].agentId);
    await second.logout();
    assert.equal(await harness.agent(tenant, { storage }).restore(), false);
  });
});

describe('exchange', () => {
  test('given an admin token in storage, then exchange() trades it for an agent session', async () => {
    // an admin who also takes calls: the admin user gets an agent profile
    const admin = await adminWithAgentProfile();
    const storage = memoryStorage();
    storage.setItem(ADMIN_TOKEN_KEY, admin.token);
    const agent = harness.agent(tenant, { storage });
    const grant = await agent.exchange();
    assert.equal(grant.session, 'agent');
    assert.equal(decodeClaims(agent.token).session, 'agent');
    assert.equal(agent.agentId, admin.agentId);
    assert.equal(storage.getItem(ADMIN_TOKEN_KEY), admin.token);
    await agent.logout();
  });

  test('given a token of another tenant, then exchange() rejects with bad_token', async () => {
    const other = await harness.tenant({ agents: 1 });
    const foreign = await login(other, other.admin.username, other.admin.password);
    const agent = harness.agent(tenant);
    await assert.rejects(agent.exchange(foreign.token), { code: ErrorCodes.BAD_TOKEN });
  });
});

describe('token refresh', () => {
  test('when refresh() runs, then a new token replaces the old one in storage and the channel stays open', async () => {
    const storage = memoryStorage();
    const agent = harness.agent(tenant, { storage });
    await agent.login(tenant.agents[0].username, tenant.agents[0].password);
    const before = agent.token;
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a new iat, so a new token
    await agent.refresh();
    assert.notEqual(agent.token, before);
    assert.equal(storage.getItem(AGENT_TOKEN_KEY), agent.token);
    await agent.setState('not_ready', 'refresh test');
    await agent.logout();
  });
});

async function login(t, username, password, session) {
  const response = await localFetch(`http://${t.host}/auth/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password, ...(session ? { session } : {}) }),
  });
  assert.equal(response.status, 200);
  return response.json();
}

async function adminWithAgentProfile() {
  const admin = await login(tenant, tenant.admin.username, tenant.admin.password);
  const response = await localFetch(`http://${tenant.host}/api/agents`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${admin.token}` },
    body: JSON.stringify({ user_id: admin.user.id }),
  });
  const created = await response.json();
  assert.equal(response.status, 201, JSON.stringify(created));
  return { token: admin.token, agentId: created.id };
}
