/**
 * SPEC's "Phone number answering settings" in the API's terms: the words shown for each mode,
 * and the PUT /api/phone-numbers/:id/answering body the form's values make.
 */

export const MODE_LABELS = { call_flow: 'Call flow', webhook: 'Your server (webhook)' };
export const METHODS = ['POST', 'GET'];
export const DEFAULT_METHOD = 'POST';
export const SIGNING_SECRET_MIN = 16;

/** The form's starting values from GET …/answering (the secret is write-only: never filled). */
export function formFromSettings(settings) {
  const flow = settings.call_flow_sid || settings.saved_call_flow_sid || '';
  return {
    mode: settings.mode || 'call_flow',
    call_flow_sid: flow,
    url: settings.webhook?.url || '',
    method: settings.webhook?.method || DEFAULT_METHOD,
    signing_secret: '',
    remove_secret: false,
  };
}

/**
 * The PUT body: only the fields of the chosen mode (the API refuses the other mode's fields).
 * An empty signing secret keeps the stored one; `remove_secret` sends null.
 */
export function answeringBody(values) {
  if (values.mode === 'webhook') {
    const body = { mode: 'webhook', url: values.url.trim(), method: values.method || DEFAULT_METHOD };
    if (values.remove_secret) body.signing_secret = null;
    else if (values.signing_secret) body.signing_secret = values.signing_secret;
    return body;
  }
  return { mode: 'call_flow', call_flow_sid: values.call_flow_sid || null };
}

/** The application name SPEC gives a number's own webhook application. */
export function dedicatedName(number) {
  return `Webhook — ${number}`;
}
