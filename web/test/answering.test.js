import { describe, expect, test } from 'vitest';
import { answeringBody, dedicatedName, formFromSettings } from '../src/screens/answering.js';

const webhookSettings = {
  mode: 'webhook', call_flow_sid: null, saved_call_flow_sid: 'f1',
  webhook: { url: 'https://h.example/a', method: 'GET', signing_secret_last4: 'abcd', has_signing_secret: true },
};

describe('the answering settings form and its PUT body', () => {
  test('the form starts from the saved settings, the secret never filled, the saved flow offered back', () => {
    expect(formFromSettings(webhookSettings)).toEqual({
      mode: 'webhook', call_flow_sid: 'f1', url: 'https://h.example/a', method: 'GET', signing_secret: '', remove_secret: false });
    expect(formFromSettings({ mode: null, call_flow_sid: null, saved_call_flow_sid: null, webhook: null }))
      .toEqual({ mode: 'call_flow', call_flow_sid: '', url: '', method: 'POST', signing_secret: '', remove_secret: false });
  });

  test('webhook mode sends only webhook fields; an empty secret keeps the stored one, remove sends null', () => {
    const values = { ...formFromSettings(webhookSettings), url: ' https://h.example/b ', call_flow_sid: 'f1' };
    expect(answeringBody(values)).toEqual({ mode: 'webhook', url: 'https://h.example/b', method: 'GET' });
    expect(answeringBody({ ...values, signing_secret: 's'.repeat(16) }).signing_secret).toBe('s'.repeat(16));
    expect(answeringBody({ ...values, signing_secret: 'typed', remove_secret: true }).signing_secret).toBeNull();
  });

  test('call-flow mode sends only the flow (none = null)', () => {
    expect(answeringBody({ mode: 'call_flow', call_flow_sid: 'f1', url: 'https://x', method: 'POST' }))
      .toEqual({ mode: 'call_flow', call_flow_sid: 'f1' });
    expect(answeringBody({ mode: 'call_flow', call_flow_sid: '' })).toEqual({ mode: 'call_flow', call_flow_sid: null });
  });

  test('the dedicated application is named as SPEC says, with an em dash', () => {
    expect(dedicatedName('15551230000')).toBe('Webhook \u2014 15551230000');
  });
});
