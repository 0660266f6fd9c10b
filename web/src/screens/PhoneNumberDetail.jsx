import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useDraft, useResource } from '../hooks.js';
import { errorsByField, humanMessage } from '../messages.js';
import { DEFAULT_METHOD, METHODS, MODE_LABELS, SIGNING_SECRET_MIN, answeringBody, dedicatedName, formFromSettings } from './answering.js';

/** One number and its "Phone number answering settings" (SPEC), on the saved number only. */
export function PhoneNumberDetail() {
  const { id } = useParams();
  const { call } = useAuth();
  const loaded = useResource(async () => {
    const [settings, flows] = await Promise.all([
      call(`/api/phone-numbers/${id}/answering`),
      call('/api/call-flows', { query: { limit: 200 } }),
    ]);
    const application = settings.application_id ? await call(`/api/applications/${settings.application_id}`) : null;
    return { settings, flows: flows.items, application };
  }, [call, id]);

  if (loaded.error && !loaded.data) {
    return (
      <>
        <h1>Phone number</h1>
        {loaded.error.isOutage
          ? <OutageBanner error={loaded.error} onRetry={loaded.reload} />
          : <p role="alert">{humanMessage(loaded.error)}</p>}
        <p><Link to="/numbers">Back to phone numbers</Link></p>
      </>
    );
  }
  if (!loaded.data) return <p role="status">Loading…</p>;
  return <AnsweringSettings key={id} id={id} data={loaded.data} onSaved={loaded.setData} />;
}

function AnsweringSettings({ id, data, onSaved }) {
  const { call } = useAuth();
  const { settings, flows, application } = data;
  const draft = useDraft(`answering:${id}`, formFromSettings(settings), ['signing_secret']);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const [busy, setBusy] = useState(false);
  const values = draft.values;
  const webhookOffered = settings.available_modes.includes('webhook');
  const webhook = settings.webhook;

  const change = (name, value) => { setSaved(null); draft.set(name, value); };

  async function save(event) {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const next = await call(`/api/phone-numbers/${id}/answering`, { method: 'PUT', body: answeringBody(values) });
      const app = next.application_id ? await call(`/api/applications/${next.application_id}`) : null;
      onSaved({ settings: next, flows, application: app });
      draft.reset(formFromSettings(next));
      const split = next.application_id !== settings.application_id && app;
      setSaved(split
        ? `Saved. This number now has its own application, “${app.name}”, so the other numbers are not changed.`
        : 'Saved.');
    } catch (err) {
      setError(err); // the typed values stay in the form (and in the draft)
    } finally {
      setBusy(false);
    }
  }

  const known = ['mode', 'call_flow_sid', 'url', 'method', 'signing_secret'];
  const { fields, form } = errorsByField(error && !error.isOutage ? error : null, known);
  return (
    <>
      <p><Link to="/numbers">Phone numbers</Link></p>
      <h1>+{settings.number}</h1>
      <dl className="facts">
        <dt>Application</dt><dd>{application ? application.name : 'None'}</dd>
        <dt>Answered by</dt><dd>{describeAnsweredBy(settings.answered_by)}</dd>
      </dl>
      <section aria-labelledby="answering">
        <h2 id="answering">Answering</h2>
        <OutageBanner error={error?.isOutage ? error : null} onRetry={() => save()} />
        <form onSubmit={save} noValidate>
          {form && <p className="form-error" role="alert">{form}</p>}
          {webhookOffered ? (
            <fieldset>
              <legend>Answering mode</legend>
              {['call_flow', 'webhook'].map((mode) => (
                <label key={mode} className="choice">
                  <input type="radio" name="mode" value={mode} checked={values.mode === mode}
                    onChange={() => change('mode', mode)} />
                  {MODE_LABELS[mode]}
                </label>
              ))}
              {fields.mode && <p className="field-error">{fields.mode}</p>}
            </fieldset>
          ) : null}
          {values.mode === 'call_flow' || !webhookOffered ? (
            <Field label="Call flow" error={fields.call_flow_sid}
              hint={settings.saved_call_flow_sid && settings.mode === 'webhook'
                ? 'Switching back restores the flow this number used before.' : undefined}>
              {(p) => (
                <select {...p} name="call_flow_sid" value={values.call_flow_sid}
                  onChange={(e) => change('call_flow_sid', e.target.value)}>
                  <option value="">None</option>
                  {flows.map((f) => <option key={f.id} value={f.id}>{f.name}</option>)}
                </select>
              )}
            </Field>
          ) : (
            <>
              <Field label="Webhook URL" error={fields.url}
                hint="https:// and reachable from the internet; plain http and private addresses are refused.">
                {(p) => <input {...p} name="url" type="url" value={values.url} placeholder="https://"
                  onChange={(e) => change('url', e.target.value)} required />}
              </Field>
              <Field label="Method" error={fields.method} hint={`${DEFAULT_METHOD} carries the call payload.`}>
                {(p) => (
                  <select {...p} name="method" value={values.method} onChange={(e) => change('method', e.target.value)}>
                    {METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
                  </select>
                )}
              </Field>
              <Field label="Signing secret" error={fields.signing_secret}
                hint={webhook?.has_signing_secret
                  ? `A secret is saved, ending in ${webhook.signing_secret_last4}. Leave empty to keep it.`
                  : `At least ${SIGNING_SECRET_MIN} characters. Stored encrypted, never shown again.`}>
                {(p) => <input {...p} name="signing_secret" type="password" autoComplete="new-password"
                  value={values.signing_secret} disabled={values.remove_secret}
                  onChange={(e) => change('signing_secret', e.target.value)} />}
              </Field>
              {webhook?.has_signing_secret && (
                <label className="choice">
                  <input type="checkbox" name="remove_secret" checked={values.remove_secret}
                    onChange={(e) => change('remove_secret', e.target.checked)} />
                  Remove the signing secret
                </label>
              )}
            </>
          )}
          <button type="submit" disabled={busy}>Save</button>
          {saved && <p className="saved" role="status">{saved}</p>}
        </form>
        {values.mode === 'webhook' && settings.mode !== 'webhook' && (
          <p className="hint">Choosing your server replaces the call flow on this number; if its application answers other numbers too, it gets its own application, named “{dedicatedName(settings.number)}”.</p>
        )}
      </section>
    </>
  );
}

function describeAnsweredBy(value) {
  return { flow: 'Call flow', webhook: 'Your server (webhook)', websocket: 'Your server (WebSocket)',
    app_json: 'Static verb list' }[value] || 'Nothing: calls are refused';
}
