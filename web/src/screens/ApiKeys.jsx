import { useState } from 'react';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useDraft, useResource, useSubmit } from '../hooks.js';
import { errorsByField } from '../messages.js';
import { SCOPES, expiresAtIso, scopesFromChoices } from './apiKeys.js';

/**
 * API keys (/api/api-keys, license `api-access`): the account's keys, a new key with its scopes
 * and expiry — the key itself is in the create answer only, so it is shown once, here, and
 * never stored — and revoking. Create and revoke are offered with the permissions
 * `api_keys.create` and `api_keys.delete`.
 */
export function ApiKeys() {
  const { call, identity } = useAuth();
  const permissions = identity?.user?.permissions || [];
  const list = useResource(() => call('/api/api-keys', { query: { include_revoked: true } }), [call]);
  const [created, setCreated] = useState(null);
  const [revokeError, setRevokeError] = useState(null);

  async function revoke(key) {
    if (!window.confirm(`Revoke the key ${key.name || key.display_prefix}? Whatever uses it stops working.`)) return;
    setRevokeError(null);
    try {
      await call(`/api/api-keys/${key.id}`, { method: 'DELETE' });
      list.reload();
    } catch (err) {
      setRevokeError(err);
    }
  }

  return (
    <>
      <h1>API keys</h1>
      <OutageBanner error={list.error} onRetry={list.reload} />
      {revokeError && <p className="form-error" role="alert">{errorsByField(revokeError).form}</p>}
      {created && (
        <section className="once" aria-labelledby="new-key">
          <h2 id="new-key">Your new key</h2>
          <Field label="Key" hint="Copy it now: it is shown only once. Send it as Authorization: Bearer, or X-API-Key.">
            {(p) => <input {...p} readOnly value={created.key} className="wide" autoFocus onFocus={(e) => e.target.select()} />}
          </Field>
          <button type="button" onClick={() => setCreated(null)}>I have copied the key</button>
        </section>
      )}
      <table>
        <caption className="visually-hidden">API keys of the account</caption>
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Expires</th>
            <th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {(list.data || []).map((key) => (
            <tr key={key.id}>
              <td>{key.name || '—'}</td>
              <td><code>{key.display_prefix}…</code></td>
              <td>{key.scopes.length ? key.scopes.join(', ') : 'none'}</td>
              <td>{key.expires_at ? new Date(key.expires_at).toLocaleString() : 'never'}</td>
              <td>{key.last_used_at ? new Date(key.last_used_at).toLocaleString() : 'never'}</td>
              <td>{keyStatus(key)}</td>
              <td>{!key.revoked_at && permissions.includes('api_keys.delete') && (
                <button type="button" className="secondary" aria-label={`Revoke ${key.name || key.display_prefix}`}
                  onClick={() => revoke(key)}>Revoke</button>)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.length === 0 && <p role="status">No API keys yet.</p>}
      {permissions.includes('api_keys.create') && <CreateKey onCreated={(key) => { setCreated(key); list.reload(); }} />}
    </>
  );
}

function keyStatus(key) {
  if (key.revoked_at) return `revoked ${new Date(key.revoked_at).toLocaleString()}`;
  if (key.expires_at && new Date(key.expires_at) <= new Date()) return 'expired';
  return 'active';
}

const EMPTY = { name: '', expires: '', ...Object.fromEntries(SCOPES.map((s) => [`scope:${s.name}`, ''])) };

/** POST /api/api-keys: name, a level per scope (none, read, read and write), expiry. */
function CreateKey({ onCreated }) {
  const { call } = useAuth();
  const draft = useDraft('api-key', EMPTY);
  const { submit, error, busy } = useSubmit(async () => {
    const body = { name: draft.values.name.trim() || null, scopes: scopesFromChoices(draft.values) };
    const expires = expiresAtIso(draft.values.expires);
    if (expires) body.expires_at = expires;
    const key = await call('/api/api-keys', { method: 'POST', body });
    draft.reset(EMPTY);
    onCreated(key);
  });

  const { fields, form } = errorsByField(error && !error.isOutage ? error : null, ['name', 'scopes', 'expires_at']);
  return (
    <section aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <OutageBanner error={error?.isOutage ? error : null} />
      <form onSubmit={submit} noValidate>
        {form && <p className="form-error" role="alert">{form}</p>}
        <Field label="Name" error={fields.name} hint="What uses the key, e.g. CRM sync.">
          {(p) => <input {...p} name="name" value={draft.values.name} onChange={(e) => draft.set('name', e.target.value)} />}
        </Field>
        <fieldset aria-describedby={fields.scopes ? 'scopes-error' : undefined}>
          <legend>Scopes</legend>
          <p className="hint">What the key may reach. A key never manages API keys.</p>
          <div className="scopes">
            {SCOPES.map((scope) => (
              <Field key={scope.name} label={scope.label}>
                {(p) => (
                  <select {...p} value={draft.values[`scope:${scope.name}`]}
                    onChange={(e) => draft.set(`scope:${scope.name}`, e.target.value)}>
                    <option value="">No access</option>
                    <option value="read">Read</option>
                    <option value="write">Read and write</option>
                  </select>
                )}
              </Field>
            ))}
          </div>
          {fields.scopes && <p className="field-error" id="scopes-error">{fields.scopes}</p>}
        </fieldset>
        <Field label="Expires" error={fields.expires_at} hint="Your local time. Empty: the key does not expire.">
          {(p) => <input {...p} type="datetime-local" name="expires" value={draft.values.expires}
            onChange={(e) => draft.set('expires', e.target.value)} />}
        </Field>
        <button type="submit" disabled={busy}>Create key</button>
      </form>
    </section>
  );
}
