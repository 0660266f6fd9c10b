// Compiled (never run) by test/types.test.js: a page's use of the SDK must type-check against
// types/index.d.ts under --strict.
import { AgentError, createAgent, ErrorCodes, memoryStorage, type Call, type Offer, type PreviewOffer } from '@saas-sbc/agent-sdk';

async function softphone(): Promise<void> {
  const agent = createAgent({ host: 'acme.example.com', storage: memoryStorage(), sip: { username: 'ag1', password: 'pw' } });
  agent.on('offer', (offer: Offer) => { void offer.accept(); });
  agent.on('preview', (preview: PreviewOffer) => {
    const { name, phoneNumber, attributes } = preview.contact;
    console.log(name ?? phoneNumber, attributes.plan);
    preview.on('ended', ({ reason }) => console.log(reason === 'timeout' ? 'too slow' : reason));
    void (phoneNumber.startsWith('+44') ? preview.skip() : preview.accept().then((ack) => console.log(ack.callId)));
  });
  agent.on('call', ({ phase, call }: { phase: 'connecting' | 'connected' | 'ended'; call: Call }) => {
    if (phase === 'connected') void call.sendDtmf('1');
  });
  agent.on('error', (err: AgentError) => {
    if (err.code === ErrorCodes.MICROPHONE_DENIED) console.log('allow the microphone');
  });
  agent.on('media', ({ state }) => console.log(state));
  try {
    await agent.login('alice', 'secret');
  } catch (err) {
    if (!(err instanceof AgentError) || err.code !== ErrorCodes.MFA_REQUIRED || !err.completeMfa) throw err;
    await err.completeMfa('123456');
  }
  const sso = await agent.ssoOptions({ redirectPath: '/agent/sso' });
  if (sso.enabled) console.log(sso.displayName, sso.startUrl.length);
  await agent.loginWithSso('?code=c&state=s');
  await agent.setState('not_ready', 'lunch');
  const grant = await agent.exchange();
  console.log(grant.account.subdomain, agent.state?.state);
  await agent.logout();
}
void softphone;
