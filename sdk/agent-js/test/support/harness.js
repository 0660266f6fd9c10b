/**
 * Starts tests/sdk/harness.py (the real API, controller and workers on the ESL simulator, with a
 * private database, Redis prefix and RabbitMQ vhost) and talks to its control API. The harness
 * stops and cleans up when our end of its stdin closes, so a killed test run leaves nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createAgent, memoryStorage } from '../../src/index.js';
import { LocalWebSocket, localFetch } from './transport.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

function python() {
  if (process.env.SBC_PYTHON) return process.env.SBC_PYTHON;
  const venv = path.join(REPO, '.venv/bin/python');
  return existsSync(venv) ? venv : 'python3';
}

export class Harness {
  static async start({ tokenLifetime } = {}) {
    const args = ['-m', 'tests.sdk.harness'];
    if (tokenLifetime) args.push('--token-lifetime', String(tokenLifetime));
    const child = spawn(python(), args, { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: child.stdout });
    const first = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('harness did not start in 120 s')), 120000);
      lines.once('line', (line) => { clearTimeout(timer); resolve(line); });
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`harness exited ${code}`)); });
    });
    return new Harness(child, JSON.parse(first));
  }

  constructor(child, info) {
    this.child = child;
    this.control = info.control;
    this.apiPort = info.apiPort;
    this.logs = info.logs;
    this.agents = [];
  }

  async post(route, body = {}) {
    const response = await fetch(this.control + route, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    });
    const data = await response.json();
    if (!response.ok) throw new Error(`harness ${route}: ${data.error}`);
    return data;
  }

  tenant(body) { return this.post('/tenant', body); }
  call(number, body = {}) { return this.post('/call', { number, ...body }); }
  phone(callId, action) { return this.post('/phone', { callId, action }); }
  callerHangup(callId) { return this.post('/caller', { callId, action: 'hangup' }); }
  restartApi() { return this.post('/api/restart'); }
  supervision(body) { return this.post('/supervision', body); }
  campaign(tenant, body) {
    return this.post('/campaign', { subdomain: tenant.subdomain, callerId: tenant.number, queueId: tenant.queue.id, ...body });
  }
  licenses(accountId, licenses) { return this.post('/licenses', { accountId, licenses }); }
  /** The user enrols an authenticator app: `{secret, recoveryCodes}`. */
  totpEnrol(tenant, user) {
    return this.post('/totp/enrol', { subdomain: tenant.subdomain, username: user.username, password: user.password });
  }
  /** The app's code `steps` 30-second steps from now. */
  async totpCode(secret, steps = 0) { return (await this.post('/totp/code', { secret, steps })).code; }
  /** Single sign-on for `tenant` at a real OpenID provider; `user` is linked to its person `subject`. */
  ssoConfigure(tenant, user, subject, redirectPath) {
    return this.post('/sso/configure', { subdomain: tenant.subdomain, host: tenant.host, redirectPath, userId: user.userId, subject });
  }
  /** `login` signs in at the provider's pages: the redirect's `{code, state, iss}`. */
  ssoSignIn(authorizationUrl, login) { return this.post('/sso/sign-in', { authorizationUrl, login }); }
  async events(accountId, prefix = '') { return (await this.post('/events', { accountId, prefix })).events; }

  /** An agent of the SDK wired to this stack (node transports, memory storage, no media). */
  agent(tenant, options = {}) {
    const agent = createAgent({
      host: tenant.host, secure: false, fetch: localFetch, WebSocket: LocalWebSocket,
      storage: options.storage || memoryStorage(), media: false,
      backoff: { initialMs: 200, maxMs: 2000, factor: 2 }, ...options,
    });
    this.agents.push(agent);
    return agent;
  }

  async stop() {
    for (const agent of this.agents) {
      try { agent._stop(); } catch { /* already stopped */ }
    }
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exited;
  }
}

/** Resolve with the first `event` of `emitter` whose payload passes `test`. */
export function next(emitter, event, test = () => true, timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, handler);
      reject(new Error(`no '${event}' event in ${timeoutMs} ms`));
    }, timeoutMs);
    const handler = (payload) => {
      if (!test(payload)) return;
      clearTimeout(timer);
      emitter.off(event, handler);
      resolve(payload);
    };
    emitter.on(event, handler);
  });
}

/** Poll `check` until it returns a truthy value. */
export async function eventually(check, timeoutMs = 15000, stepMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
