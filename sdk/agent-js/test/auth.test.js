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

describe('second factor (TOTP)', () => {
  let mfaTenant;
  before(async () => { mfaTenant = await harness.tenant({ agents: 2 }); });

  /** login() with the password: the `mfa_required` rejection, caught */
  async function passwordStep(agent, user) {
    const err = await agent.login(user.username, user.password).then(
      () => assert.fail('login resolved without a second factor'), (e) => e);
    assert.equal(err.code, ErrorCodes.MFA_REQUIRED, err.message);
    return err;
  }

  test('given an enrolled agent, when login() rejects with mfa_required, then completeMfa(code) signs in and opens the channel', async () => {
    const user = mfaTenant.agents[0];
    const { secret, recoveryCodes } = await harness.totpEnrol(mfaTenant, user);
    const agent = harness.agent(mfaTenant);
    const errors = [];
    agent.on('error', (err) => errors.push(err.code));

    const challenge = await passwordStep(agent, user);
    assert.equal(typeof challenge.completeMfa, 'function');
    assert.deepEqual(challenge.details.methods, ['totp', 'recovery_code']);
    assert.equal(agent.token, null);
    // the enrolment's confirmation used the current step: the app's next code
    const code = await harness.totpCode(secret, 1);
    const grant = await challenge.completeMfa(code);

    assert.equal(grant.session, 'agent');
    assert.equal(agent.agentId, user.agentId);
    assert.equal(agent.connection, 'open');
    assert.deepEqual(errors, [], 'mfa_required is a step, not an error event');
    await agent.logout();

    // the same code again, on a new login: replay refused with the server's code ...
    const again = harness.agent(mfaTenant);
    const second = await passwordStep(again, user);
    await assert.rejects(second.completeMfa(code), { code: ErrorCodes.MFA_CODE_REUSED, status: 401 });
    assert.equal(again.token, null);
    // ... and the challenge is still good for another factor: a recovery code signs in
    const recovered = await second.completeMfa(recoveryCodes[0]);
    assert.equal(recovered.user.id, user.userId);
    assert.equal(again.connection, 'open');
    await again.logout();
  });

  test('given wrong codes, then each rejects with invalid_mfa_code and the fourth is throttled with Retry-After', async () => {
    const user = mfaTenant.agents[1];
    const { secret } = await harness.totpEnrol(mfaTenant, user);
    const valid = new Set(await Promise.all([-1, 0, 1, 2].map((steps) => harness.totpCode(secret, steps))));
    let wrong = 0;
    while (valid.has(String(wrong).padStart(6, '0'))) wrong += 1;
    const agent = harness.agent(mfaTenant);
    const challenge = await passwordStep(agent, user);
    const right = await harness.totpCode(secret, 1);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await assert.rejects(challenge.completeMfa(String(wrong).padStart(6, '0')), { code: ErrorCodes.INVALID_MFA_CODE, status: 401 });
    }
    // the right code is refused too while the pair waits: a throttled attempt confirms nothing
    const throttled = await challenge.completeMfa(right).then(
      () => assert.fail('a fourth code right after three wrong ones was let through'), (e) => e);
    assert.equal(throttled.code, ErrorCodes.TOO_MANY_ATTEMPTS);
    assert.equal(throttled.status, 429);
    // the server's first delay is 2 s; Retry-After is what is left of it, rounded up, so a
    // loaded machine that took over a second between the third code and this one reads 1
    assert.ok([1, 2].includes(throttled.retryAfterSeconds), `Retry-After ${throttled.retryAfterSeconds}`);
    assert.equal(agent.token, null);
  });
});

describe('single sign-on', () => {
  test('given a tenant without single sign-on, then ssoOptions() offers none', async () => {
    const agent = harness.agent(tenant);
    assert.deepEqual(await agent.ssoOptions(), { enabled: false, displayName: null, startUrl: null });
  });

  test('given a state the API never issued, then loginWithSso rejects with sso_state_invalid', async () => {
    const agent = harness.agent(tenant);
    await assert.rejects(agent.loginWithSso({ code: 'a-code', state: 'not-a-state-we-issued' }),
      { code: ErrorCodes.SSO_STATE_INVALID, status: 400 });
    assert.equal(agent.token, null);
  });

  test('given the provider refused, then loginWithSso rejects with sso_denied and its error', async () => {
    const agent = harness.agent(tenant);
    await assert.rejects(agent.loginWithSso('https://acme.example.com/agent/sso?error=access_denied&state=s'),
      { code: ErrorCodes.SSO_DENIED, details: { error: 'access_denied' } });
  });

  test('given a linked agent who signs in at the real OpenID provider, then the redirect page URL opens the same agent session as a password', async () => {
    const ssoTenant = await harness.tenant({ agents: 1 });
    const user = ssoTenant.agents[0];
    await harness.ssoConfigure(ssoTenant, user, 'bob', '/agent/sso');
    const agent = harness.agent(ssoTenant);

    const options = await agent.ssoOptions({ redirectPath: '/agent/sso' });
    assert.equal(options.enabled, true);
    assert.equal(options.displayName, 'Example IdP');
    assert.equal(options.startUrl, `http://${ssoTenant.host}/auth/sso/start?session=agent&redirect_path=%2Fagent%2Fsso`);
    const started = await localFetch(options.startUrl); // what the button's navigation gets
    assert.equal(started.status, 302);
    const answer = await harness.ssoSignIn(started.headers.get('Location'), 'bob');
    const page = `http://${ssoTenant.host}/agent/sso?${new URLSearchParams(answer)}`;

    const grant = await agent.loginWithSso(page);

    assert.equal(grant.session, 'agent');
    assert.equal(grant.user.id, user.userId);
    assert.equal(agent.agentId, user.agentId);
    assert.equal(agent.connection, 'open');
    assert.equal(decodeClaims(agent.token).session, 'agent');
    // the state was single use: the same page again is refused
    await assert.rejects(harness.agent(ssoTenant).loginWithSso(page), { code: ErrorCodes.SSO_STATE_INVALID });
    await agent.logout();
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
