// The example softphone: every line here is the SDK's public API and the DOM, nothing else.
// `/sdk.js` is the SDK bundled with JsSIP by examples/serve.js (esbuild, in memory).
import { createAgent } from '/sdk.js';

const $ = (id) => document.getElementById(id);
const log = (text) => { $('log').textContent += `${new Date().toISOString().slice(11, 23)} ${text}\n`; $('log').scrollTop = 1e9; };
// every SDK event with a timestamp, for whoever drives this page (the browser test reads it)
window.sdkEvents = [];
const record = (event, detail) => window.sdkEvents.push({ event, ...detail, t: performance.now() });

$('host').value = location.host;
let agent = null;
window.agent = null; // for debugging in the console (and the browser test's RTP figures)

function enable(ids, on) { for (const id of ids) $(id).disabled = !on; }
const CALL_BUTTONS = ['hangup', 'hold', 'unhold', 'mute', 'unmute', 'dtmf'];

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const sip = $('sip-username').value ? {
    username: $('sip-username').value, password: $('sip-password').value, wsUrl: $('sip-wss').value || undefined,
  } : undefined;
  agent = createAgent({ host: $('host').value, sip });
  window.agent = agent;
  wire(agent);
  try {
    await agent.login($('username').value, $('password').value);
    enable(['available', 'not-ready', 'logout'], true);
    enable(['login'], false);
  } catch (err) {
    log(`login failed: ${err.code} ${err.message}`);
  }
});

function wire(a) {
  a.on('connection', (c) => { $('connection').textContent = c.state; record('connection', { state: c.state }); log(`connection ${c.state}`); });
  a.on('state', (s) => { $('state').textContent = s.state + (s.reason ? ` (${s.reason})` : ''); record('state', { state: s.state }); });
  a.on('offer', (offer) => {
    $('offer').textContent = offer.kind === 'consult'
      ? `consultation from agent ${offer.fromAgentId} (caller ${offer.from || 'unknown'})`
      : `ringing: ${offer.from || 'caller'} via ${offer.queue}`;
    record('offer', { offerId: offer.id, kind: offer.kind, fromAgentId: offer.fromAgentId });
    log(`offer ${offer.id} from ${offer.from}`);
    enable(['accept', 'reject'], true);
    offer.on('ended', ({ reason }) => {
      $('offer').textContent = reason;
      record('offerEnded', { reason });
      enable(['accept', 'reject'], false);
    });
  });
  a.on('call', ({ phase, callId, cause }) => {
    $('call').textContent = phase + (cause ? ` (${cause})` : '');
    record('call', { phase, callId, cause });
    log(`call ${callId} ${phase}${cause ? ' ' + cause : ''}`);
    enable(CALL_BUTTONS, phase !== 'ended');
    enable(['dispose'], true);
  });
  a.on('media', (m) => {
    if (m.state === 'registered' || m.state === 'unregistered') $('registration').textContent = m.state;
    else $('media').textContent = m.state;
    record('media', { state: m.state, source: m.source });
    log(`media ${m.state} (${m.source})`);
  });
  a.on('supervisor', (s) => log(`supervisor ${s.mode} ${s.active ? 'on' : 'off'}`));
  a.on('takeover', () => log('another session took over'));
  a.on('error', (err) => { $('error').textContent = `${err.code}: ${err.message}`; record('error', { code: err.code }); log(`error ${err.code}: ${err.message}`); });
}

const act = (promise) => promise.catch((err) => log(`failed: ${err.code} ${err.message}`));
$('available').onclick = () => act(agent.setState('available'));
$('not-ready').onclick = () => act(agent.setState('not_ready', 'break'));
$('accept').onclick = () => { record('acceptClicked', {}); act(agent.offer.accept()); };
$('reject').onclick = () => act(agent.offer.reject());
$('hangup').onclick = () => act(agent.call.hangup());
$('hold').onclick = () => act(agent.call.hold());
$('unhold').onclick = () => act(agent.call.unhold());
$('mute').onclick = () => act(agent.call.mute());
$('unmute').onclick = () => act(agent.call.unmute());
$('dtmf').onclick = () => act(agent.call.sendDtmf($('digits').value));
$('dispose').onclick = () => act(agent.setDisposition($('disposition').value));
$('logout').onclick = async () => {
  await agent.logout();
  enable(['available', 'not-ready', 'logout', 'accept', 'reject', 'dispose', ...CALL_BUTTONS], false);
  enable(['login'], true);
  $('connection').textContent = 'logged out';
};
