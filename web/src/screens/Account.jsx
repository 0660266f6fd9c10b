import { useState } from 'react';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useResource, useSubmit } from '../hooks.js';
import { errorsByField } from '../messages.js';

/** What each license opens, in the words of the screens it shows. */
export const LICENSE_TEXT = {
  'api-access': 'API keys: scripts and integrations call the REST API',
  'queue-mgmt': 'Queues, agents, the live view and supervision',
  'programmable-voice': 'Numbers answered by your own server (webhooks) and call control',
};

const LIMIT_MESSAGES = {
  limit_raise_forbidden: 'You can only lower the limit. Raising it (or going back to unlimited) is done by the platform operator.',
};

/** "Unlimited" for 0, the figure otherwise. */
export function concurrencyText(limit) {
  return limit ? `${limit} calls at once` : 'Unlimited';
}

/**
 * The account: its licenses and limits. An administrator (admin session) reads them from
 * GET /api/account and may lower the concurrency limit; everyone else sees the licenses their
 * sign-in carries, read-only (the API answers /api/account to administrators only).
 */
export function Account() {
  const { call, identity } = useAuth();
  const isAdmin = identity?.user?.role === 'admin';
  const loaded = useResource(() => (isAdmin ? call('/api/account') : Promise.resolve(null)), [call, isAdmin]);
  const refused = loaded.error && !loaded.error.isOutage;
  const account = loaded.data;
  const licenses = account?.licenses || identity?.account?.licenses || [];
  return (
    <>
      <h1>Account</h1>
      <OutageBanner error={loaded.error?.isOutage ? loaded.error : null} onRetry={loaded.reload} />
      <dl className="facts">
        <dt>Account</dt><dd>{account?.name || identity?.account?.subdomain}</dd>
        <dt>Address</dt><dd>{identity?.account?.subdomain}</dd>
      </dl>
      <h2>Licenses</h2>
      {licenses.length ? (
        <ul className="licenses">
          {licenses.map((name) => <li key={name}><strong>{name}</strong>{LICENSE_TEXT[name] ? `: ${LICENSE_TEXT[name]}` : ''}</li>)}
        </ul>
      ) : <p>No licenses.</p>}
      <p className="hint">Licenses are set by the platform operator.</p>
      <h2>Limits</h2>
      {account ? (
        <>
          <dl className="facts">
            <dt>Concurrent calls</dt><dd data-testid="concurrency">{concurrencyText(account.max_concurrent_calls)}</dd>
            <dt>Second factor</dt><dd>{account.mfa_required ? 'Required for every user' : 'Optional'}</dd>
          </dl>
          <LowerLimit account={account} onSaved={(saved) => loaded.setData(saved)} />
        </>
      ) : (
        !loaded.loading && (
          <p>{refused || !isAdmin
            ? 'Only an administrator signed in to the console can see and change the account\'s limits.'
            : ''}</p>
        )
      )}
    </>
  );
}

function LowerLimit({ account, onSaved }) {
  const { call } = useAuth();
  const [value, setValue] = useState('');
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    const body = { max_concurrent_calls: value === '' ? null : Number(value) };
    onSaved(await call('/api/account', { method: 'PATCH', body }));
    setSaved(true);
    setValue('');
  });
  const { fields, form } = errorsByField(save.error && !save.error.isOutage ? save.error : null, ['max_concurrent_calls']);
  const known = save.error && LIMIT_MESSAGES[save.error.code];
  return (
    <form className="inline" onSubmit={save.submit} noValidate>
      <OutageBanner error={save.error?.isOutage ? save.error : null} onRetry={save.submit} />
      <Field label="Lower the concurrent calls limit to"
        hint={account.max_concurrent_calls ? `At most ${account.max_concurrent_calls}.` : 'Any number: the account has no limit now.'}
        error={known || fields.max_concurrent_calls || form}>
        {(p) => <input {...p} type="number" min="1" value={value} onChange={(e) => setValue(e.target.value)} />}
      </Field>
      <button type="submit" disabled={save.busy}>Save limit</button>
      {saved && <p className="saved" role="status">The limit applies from the next call.</p>}
    </form>
  );
}
