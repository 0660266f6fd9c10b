/**
 * @saas-sbc/agent-sdk — a headless agent softphone: the agent channel (state, offers, calls)
 * and a WebRTC media leg (JsSIP over WSS, DTLS-SRTP) on the platform's agent profile.
 *
 *     import { createAgent } from '@saas-sbc/agent-sdk';
 *     const agent = createAgent({ host: 'acme.example.com' });
 *     agent.on('offer', (offer) => offer.accept());
 *     await agent.login('alice', 'secret');
 *     await agent.setState('available');
 */
import { Agent } from './agent.js';

export { Agent, STATES } from './agent.js';
export { Call, PHASES } from './call.js';
export { Offer } from './offer.js';
export { PreviewOffer } from './preview.js';
export { AgentError, ErrorCodes } from './errors.js';
export { ADMIN_TOKEN_KEY, AGENT_TOKEN_KEY, memoryStorage } from './storage.js';
export { isDtlsSrtp } from './media.js';

/**
 * @param {import('../types/index.js').AgentOptions} options
 * @returns {Agent}
 */
export function createAgent(options) {
  return new Agent(options);
}
