#!/usr/bin/env node
/**
 * Drives Debian's chromium (playwright-core, never a downloaded browser) through the example
 * softphone page, one JSON line per step, so a test in another language (the real-switch suite
 * in Python, which places the sipp calls) can lead it:
 *
 *   env: SDK_PAGE_URL, SDK_AGENT_USER, SDK_AGENT_PASSWORD, [SDK_SIP_USER, SDK_SIP_PASSWORD,
 *        SDK_SIP_WSS], [CHROMIUM=/usr/bin/chromium], [SDK_DENY_MICROPHONE=1: the page may not
 *        use the microphone, as when a person clicks "Block"]
 *   stdout: {"event":"ready"} once logged in, registered (with SIP credentials) and available;
 *   stdin commands (one JSON per line) and their answers:
 *     {"cmd":"take"}    → waits for the offer, clicks Accept, waits for `connected`:
 *                         {"event":"connected","offerId","offerToConnectedMs"}
 *     {"cmd":"stats"}   → {"event":"stats","inbound":{packetsReceived,bytesReceived,audioLevel,
 *                          totalAudioEnergy,totalSamplesDuration (the RMS level of what the browser
 *                          played over an interval is sqrt(Δenergy / Δduration))},
 *                          "outbound":{packetsSent,bytesSent},"dtls":"connected","srtp":"..."}
 *     {"cmd":"hold"} / {"cmd":"unhold"} → clicks Hold / Resume, waits for the `media` state
 *                         `held` / `connected`: {"event":"media","state"}
 *     {"cmd":"hangup"}  → clicks Hang up, waits for `ended`: {"event":"ended","phases":[...]}
 *     {"cmd":"consult","agentId"} → `call.consult({type: 'agent', agentId})` (attended transfer):
 *                         {"event":"ack","ok":true} or {"event":"ack","ok":false,"code"}
 *     {"cmd":"completeTransfer"} → `call.completeTransfer()`: the same `ack` (code
 *                         `consult_not_answered` until the consulted agent answered)
 *     {"cmd":"answerConsult"} → the consulted agent's side: waits for the channel's `offer` (kind
 *                         `consult`), clicks Accept (`offer.accept()` answers the media leg's
 *                         ring), waits until the session is established:
 *                         {"event":"answered","offerId","kind","fromAgentId","phases"}
 *     {"cmd":"waitConnected"} → waits for the call phase `connected`: {"event":"connected","callId"}
 *     {"cmd":"waitEnded"} → waits for the call phase `ended`: {"event":"ended","cause"}
 *     {"cmd":"acceptDenied"} → waits for the offer, clicks Accept, waits for `error`
 *                         `microphone_denied` and `ended`: {"event":"denied","phases","errors"}
 *     {"cmd":"quit"}    → closes the browser and exits
 *   any failure: {"event":"error","message"} and exit 1.
 *   stderr: the page's console, errors, crashes and navigations as they happen, and its #log at
 *   exit (tests/sdk/browser.py keeps it as browser-<user>.log): what the agent's page saw when a
 *   test failed, e.g. whether the SDK or the test ended a call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu',
  '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--ignore-certificate-errors', // the switch's WSS certificate is self-signed
  // the switch listens on 127.0.0.1: WebRTC must offer loopback candidates, and plain host
  // candidates (not mDNS names, which FreeSWITCH cannot resolve)
  '--allow-loopback-in-peer-connection', '--disable-features=WebRtcHideLocalIpsWithMdns',
];
const STEP_MS = Number(process.env.SDK_STEP_TIMEOUT_MS || 30000);

/** Launch chromium with a fresh profile; returns {context, page, close}. */
export async function launch({ denyMicrophone = false } = {}) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'sdk-chromium-'));
  const args = denyMicrophone
    ? [...CHROMIUM_ARGS.filter((a) => a !== '--use-fake-ui-for-media-stream'), '--deny-permission-prompts']
    : CHROMIUM_ARGS;
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args,
    ignoreHTTPSErrors: true, permissions: denyMicrophone ? [] : ['microphone'],
  });
  const page = context.pages()[0] || await context.newPage();
  return {
    context, page,
    close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); },
  };
}

/** Log in on the example page and go available. */
export async function ready(page, { url, user, password, sipUser, sipPassword, sipWss }) {
  await page.goto(url);
  await page.fill('#username', user);
  await page.fill('#password', password);
  if (sipUser) {
    await page.fill('#sip-username', sipUser);
    await page.fill('#sip-password', sipPassword);
    if (sipWss) await page.fill('#sip-wss', sipWss);
  }
  await page.click('#login');
  await waitText(page, '#connection', 'open');
  if (sipUser) await waitText(page, '#registration', 'registered');
  await page.click('#available');
  await waitText(page, '#state', 'available');
}

export async function waitText(page, selector, text, timeout = STEP_MS) {
  try {
    await page.waitForFunction(([s, t]) => document.querySelector(s)?.textContent.startsWith(t), [selector, text], { timeout });
  } catch (err) {
    const seen = await page.textContent(selector).catch(() => '?');
    const log = await page.textContent('#log').catch(() => '');
    throw new Error(`${selector} never showed '${text}' (shows '${seen}')\n${log}`, { cause: err });
  }
}

/** Wait for the next offer, accept it, wait for `connected`; times from the page's own clock. */
export async function take(page) {
  const before = await page.evaluate(() => window.sdkEvents.length);
  await page.waitForFunction((n) => window.sdkEvents.slice(n).some((e) => e.event === 'offer'), before, { timeout: STEP_MS * 2 });
  await page.click('#accept');
  await page.waitForFunction((n) => window.sdkEvents.slice(n).some((e) => e.event === 'call' && e.phase === 'connected'), before, { timeout: STEP_MS })
    .catch(async () => { throw new Error(`never connected\n${await page.textContent('#log')}`); });
  return page.evaluate((n) => {
    const events = window.sdkEvents.slice(n);
    const offer = events.find((e) => e.event === 'offer');
    const connected = events.find((e) => e.event === 'call' && e.phase === 'connected');
    return { offerId: offer.offerId, offerToConnectedMs: Math.round(connected.t - offer.t) };
  }, before);
}

/** RTP and DTLS figures of the answered WebRTC leg (RTCPeerConnection.getStats). */
export function stats(page) {
  return page.evaluate(async () => {
    const pc = window.agent.media.session.connection;
    const report = await pc.getStats();
    const out = { inbound: null, outbound: null, dtls: null, srtp: null, codec: null };
    report.forEach((s) => {
      if (s.type === 'inbound-rtp' && s.kind === 'audio') {
        out.inbound = { packetsReceived: s.packetsReceived, bytesReceived: s.bytesReceived, audioLevel: s.audioLevel ?? null,
          totalAudioEnergy: s.totalAudioEnergy ?? null, totalSamplesDuration: s.totalSamplesDuration ?? null, codecId: s.codecId };
      }
      if (s.type === 'outbound-rtp' && s.kind === 'audio') out.outbound = { packetsSent: s.packetsSent, bytesSent: s.bytesSent };
      if (s.type === 'transport') { out.dtls = s.dtlsState; out.srtp = s.srtpCipher || null; }
    });
    if (out.inbound && out.inbound.codecId) out.codec = report.get(out.inbound.codecId)?.mimeType || null;
    out.remoteSdpProto = (pc.remoteDescription?.sdp.match(/^m=audio \d+ (\S+)/m) || [])[1] || null;
    return out;
  });
}

/** Click a call button and wait for the `media` event it should cause. */
export async function mediaAction(page, button, state) {
  const before = await page.evaluate(() => window.sdkEvents.length);
  await page.click(`#${button}`);
  await page.waitForFunction(([n, s]) => window.sdkEvents.slice(n).some((e) => e.event === 'media' && e.state === s), [before, state], { timeout: STEP_MS })
    .catch(async () => { throw new Error(`no media '${state}' after ${button}\n${await page.textContent('#log')}`); });
  return { event: 'media', state };
}

/** Accept with the microphone refused: the SDK reports `microphone_denied` and the call ends. */
export async function acceptDenied(page) {
  const before = await page.evaluate(() => window.sdkEvents.length);
  await page.waitForFunction((n) => window.sdkEvents.slice(n).some((e) => e.event === 'offer'), before, { timeout: STEP_MS * 2 });
  await page.click('#accept');
  await page.waitForFunction((n) => window.sdkEvents.slice(n).some((e) => e.event === 'call' && e.phase === 'ended'), before, { timeout: STEP_MS })
    .catch(async () => { throw new Error(`the call never ended\n${await page.textContent('#log')}`); });
  return page.evaluate((n) => {
    const events = window.sdkEvents.slice(n);
    return { phases: events.filter((e) => e.event === 'call').map((e) => e.phase),
      errors: events.filter((e) => e.event === 'error').map((e) => e.code) };
  }, before);
}

/** Run an SDK call action in the page; a refusal is an answer (`ok: false` and its code), not a failure. */
export function callAction(page, action, args) {
  return page.evaluate(async ([a, x]) => {
    try {
      await (a === 'consult' ? window.agent.call.consult({ type: 'agent', agentId: x.agentId }) : window.agent.call[a]());
      return { event: 'ack', ok: true };
    } catch (err) {
      return { event: 'ack', ok: false, code: err.code || String(err) };
    }
  }, [action, args]);
}

/**
 * The consulted agent answers through the public path: its channel's `offer` of kind `consult`,
 * the page's Accept (`offer.accept()`), which answers the media leg's ring; waits until the
 * leg is established. The offer's fields and the call phases seen so far.
 */
export async function answerConsult(page) {
  const before = await page.evaluate(() => window.sdkEvents.length);
  await page.waitForFunction((n) => window.sdkEvents.slice(n).some((e) => e.event === 'offer'), before, { timeout: STEP_MS * 2 });
  await page.click('#accept');
  await page.waitForFunction(() => window.agent.media.session && window.agent.media.session.isEstablished(), null, { timeout: STEP_MS })
    .catch(async () => { throw new Error(`the consultation was never established\n${await page.textContent('#log')}`); });
  return page.evaluate((n) => {
    const events = window.sdkEvents.slice(n);
    const offer = events.find((e) => e.event === 'offer');
    return { event: 'answered', offerId: offer.offerId, kind: offer.kind, fromAgentId: offer.fromAgentId,
      phases: events.filter((e) => e.event === 'call').map((e) => e.phase) };
  }, before);
}

/** Wait for this agent's call to be `connected` (a consulted agent: once the transfer completed). */
export async function waitConnected(page) {
  await page.waitForFunction(() => window.sdkEvents.some((e) => e.event === 'call' && e.phase === 'connected'), null, { timeout: STEP_MS })
    .catch(async () => { throw new Error(`never connected\n${await page.textContent('#log')}`); });
  return page.evaluate(() => ({ event: 'connected', callId: window.agent.call && window.agent.call.id }));
}

/** Wait for this agent's call to end (e.g. after its transfer completed); its cause. */
export async function waitEnded(page) {
  await page.waitForFunction(() => window.sdkEvents.some((e) => e.event === 'call' && e.phase === 'ended'), null, { timeout: STEP_MS });
  return page.evaluate(() => ({ event: 'ended', cause: window.sdkEvents.find((e) => e.event === 'call' && e.phase === 'ended').cause }));
}

export async function hangup(page) {
  const before = await page.evaluate(() => window.sdkEvents.length);
  await page.click('#hangup');
  await page.waitForFunction((n) => window.sdkEvents.slice(n).some((e) => e.event === 'call' && e.phase === 'ended'), before, { timeout: STEP_MS });
  return page.evaluate(() => window.sdkEvents.filter((e) => e.event === 'call').map((e) => e.phase));
}

async function main() {
  const env = process.env;
  const say = (body) => process.stdout.write(JSON.stringify(body) + '\n');
  const browser = await launch({ denyMicrophone: env.SDK_DENY_MICROPHONE === '1' });
  const trace = (text) => process.stderr.write(`${new Date().toISOString()} ${text}\n`);
  browser.page.on('console', (m) => trace(`console.${m.type()}: ${m.text()}`));
  browser.page.on('pageerror', (e) => trace(`pageerror: ${e}`));
  browser.page.on('crash', () => trace('page crashed'));
  browser.page.on('close', () => trace('page closed'));
  browser.page.on('framenavigated', (f) => { if (f === browser.page.mainFrame()) trace(`navigated ${f.url()}`); });
  browser.context.on('close', () => trace('context closed'));
  try {
    await ready(browser.page, {
      url: env.SDK_PAGE_URL, user: env.SDK_AGENT_USER, password: env.SDK_AGENT_PASSWORD,
      sipUser: env.SDK_SIP_USER, sipPassword: env.SDK_SIP_PASSWORD, sipWss: env.SDK_SIP_WSS,
    });
    say({ event: 'ready' });
    const commands = {
      take: async () => ({ event: 'connected', ...(await take(browser.page)) }),
      stats: async () => ({ event: 'stats', ...(await stats(browser.page)) }),
      hold: () => mediaAction(browser.page, 'hold', 'held'),
      unhold: () => mediaAction(browser.page, 'unhold', 'connected'),
      hangup: async () => ({ event: 'ended', phases: await hangup(browser.page) }),
      acceptDenied: async () => ({ event: 'denied', ...(await acceptDenied(browser.page)) }),
      consult: (args) => callAction(browser.page, 'consult', args),
      completeTransfer: () => callAction(browser.page, 'completeTransfer', {}),
      answerConsult: () => answerConsult(browser.page),
      waitConnected: () => waitConnected(browser.page),
      waitEnded: () => waitEnded(browser.page),
      events: async () => ({ event: 'events', events: await browser.page.evaluate(() => window.sdkEvents) }),
    };
    for await (const line of readline.createInterface({ input: process.stdin })) {
      if (!line.trim()) continue;
      const { cmd, ...args } = JSON.parse(line);
      if (cmd === 'quit') break;
      const run = commands[cmd];
      say(run ? await run(args) : { event: 'error', message: `unknown command ${cmd}` });
    }
  } catch (err) {
    say({ event: 'error', message: String(err && err.stack ? err.stack : err) });
    process.exitCode = 1;
  } finally {
    trace(`page log:\n${await browser.page.textContent('#log').catch((e) => String(e))}`);
    await browser.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  await main();
}
