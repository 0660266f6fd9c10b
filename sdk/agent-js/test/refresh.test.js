/**
 * Token refresh before expiry, against an API whose tokens live 20 s (SBC_TOKEN_LIFETIME_SECONDS):
 * the SDK refreshes when a quarter of the lifetime is left, keeps the channel working past the
 * first token's expiry, and reconnects with the fresh token after the API restarts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AGENT_TOKEN_KEY, memoryStorage } from '../src/index.js';
import { decodeClaims } from '../src/storage.js';
import { Harness, next } from './support/harness.js';

const LIFETIME = 20;
let harness;
let tenant;

before(async () => {
  harness = await Harness.start({ tokenLifetime: LIFETIME });
  tenant = await harness.tenant({ agents: 1 });
});
after(() => harness && harness.stop());

test('given a 20 s token, then it is refreshed before expiry and the channel and REST keep working after the first one expired', async () => {
  const storage = memoryStorage();
  const agent = harness.agent(tenant, { storage });
  await agent.login(tenant.agents[0].username, tenant.agents[0].password);
  const first = agent.token;
  const firstExp = decodeClaims(first).exp * 1000;
  const refreshed = next(agent.session, 'refreshed', () => true, LIFETIME * 1000);
  await refreshed;
  assert.notEqual(agent.token, first);
  assert.ok(Date.now() < firstExp, 'refreshed before the old token expired');
  assert.equal(storage.getItem(AGENT_TOKEN_KEY), agent.token);
  // the API restarts: the channel comes back with the current token (the first one is about
  // to expire, or has: the reconnect must not use it)
  const reopened = next(agent, 'connection', (c) => c.state === 'open', 60000);
  await harness.restartApi();
  await reopened;
  // past the first token's expiry, commands still work
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstExp - Date.now() + 500)));
  const relayed = next(agent, 'state', (s) => s.state === 'not_ready');
  await agent.setState('not_ready', 'after expiry');
  await relayed;
  // REST with the refreshed token (the channel is closed for this one)
  agent.channel.close();
  const viaRest = await agent.setState('not_ready', 'rest');
  assert.equal(viaRest.state, 'not_ready');
  await agent.logout();
});

test('given an expired token in storage, then restore() refuses it and clears it', async () => {
  const storage = memoryStorage();
  const agent = harness.agent(tenant, { storage });
  await agent.login(tenant.agents[0].username, tenant.agents[0].password);
  agent._stop();
  const stale = storage.getItem(AGENT_TOKEN_KEY);
  clearTimeout(agent.session._timer); // stop the refresh: let it expire
  await new Promise((resolve) => setTimeout(resolve, (decodeClaims(stale).exp * 1000) - Date.now() + 300));
  const later = harness.agent(tenant, { storage });
  assert.equal(await later.restore(), false);
  assert.equal(storage.getItem(AGENT_TOKEN_KEY), null);
});
