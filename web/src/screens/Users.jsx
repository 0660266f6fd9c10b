import { useState } from 'react';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useCursorPages, useDraft, useSubmit } from '../hooks.js';
import { errorsByField } from '../messages.js';

const ROLES = ['admin', 'supervisor', 'agent'];
const PAGE_SIZE = 50;

/**
 * Users and roles (/api/users, administrators): the list, a new user, a role change (which the
 * server follows by signing the user out everywhere), "Sign out everywhere"
 * (DELETE /api/users/:id/sessions) and the second-factor reset (DELETE /api/users/:id/mfa).
 */
export function Users() {
  const { call, identity } = useAuth();
  const list = useCursorPages(call, '/api/users', { limit: PAGE_SIZE }, [call]);
  const [result, setResult] = useState(null); // {text} or {error}
  // users as the server answered a change (PATCH): shown at once, not the list's older copy
  const [changed, setChanged] = useState({});
  const items = list.items.map((user) => changed[user.id] || user);

  async function act(action, done) {
    setResult(null);
    try {
      const answer = await action();
      if (answer?.id) setChanged((c) => ({ ...c, [answer.id]: answer }));
      setResult({ text: done });
      list.reload();
    } catch (error) {
      setResult({ error });
    }
  }

  const changeRole = (user, role) => act(() => call(`/api/users/${user.id}`, { method: 'PATCH', body: { role } }),
    `${user.username} is now ${role}, and was signed out everywhere.`);
  const signOut = (user) => act(() => call(`/api/users/${user.id}/sessions`, { method: 'DELETE' }),
    `${user.username} was signed out everywhere.`);
  const resetMfa = (user) => {
    if (!window.confirm(`Reset the second factor of ${user.username}? They are signed out, and sign in with their password alone until they set it up again.`)) return;
    act(() => call(`/api/users/${user.id}/mfa`, { method: 'DELETE' }),
      `The second factor of ${user.username} was reset, and they were signed out everywhere.`);
  };

  const outage = [list.error, list.moreError, result?.error].find((e) => e?.isOutage) || null;
  return (
    <>
      <h1>Users</h1>
      <OutageBanner error={outage} onRetry={list.reload} />
      {result?.text && <p className="saved" role="status">{result.text}</p>}
      {result?.error && !result.error.isOutage && <p className="form-error" role="alert">{errorsByField(result.error).form}</p>}
      <table>
        <caption className="visually-hidden">Users of the account</caption>
        <thead>
          <tr><th scope="col">Username</th><th scope="col">Role</th><th scope="col">Second factor</th>
            <th scope="col">Active</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {items.map((user) => {
            const self = user.id === identity?.user?.id;
            return (
              <tr key={user.id}>
                <th scope="row">{user.username}{self && ' (you)'}</th>
                <td>
                  <label className="visually-hidden" htmlFor={`role-${user.id}`}>Role of {user.username}</label>
                  <select id={`role-${user.id}`} value={user.role} disabled={self}
                    onChange={(e) => changeRole(user, e.target.value)}>
                    {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
                  </select>
                </td>
                <td>{user.mfa_enrolled ? 'on' : 'off'}</td>
                <td>{user.is_active ? 'yes' : 'no'}</td>
                <td className="actions">
                  <button type="button" className="secondary" aria-label={`Sign out everywhere: ${user.username}`}
                    onClick={() => signOut(user)}>Sign out everywhere</button>
                  {user.mfa_enrolled && (
                    <button type="button" className="secondary" aria-label={`Reset second factor: ${user.username}`}
                      onClick={() => resetMfa(user)}>Reset second factor</button>)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {list.nextCursor && <button type="button" onClick={list.loadMore}>Load more</button>}
      <CreateUser onCreated={(user) => { setResult({ text: `${user.username} was created.` }); list.reload(); }} />
    </>
  );
}

const EMPTY = { username: '', email: '', role: 'agent', password: '' };

/** POST /api/users; the password is never kept in the draft. */
function CreateUser({ onCreated }) {
  const { call } = useAuth();
  const draft = useDraft('new-user', EMPTY, ['password']);
  const { submit, error, busy } = useSubmit(async () => {
    const { username, email, role, password } = draft.values;
    const user = await call('/api/users', { method: 'POST',
      body: { username: username.trim(), role, password, ...(email.trim() ? { email: email.trim() } : {}) } });
    draft.reset(EMPTY);
    onCreated(user);
  });

  const { fields, form } = errorsByField(error && !error.isOutage ? error : null, ['username', 'password', 'role', 'email']);
  return (
    <section aria-labelledby="create-user">
      <h2 id="create-user">Add a user</h2>
      <OutageBanner error={error?.isOutage ? error : null} />
      <form onSubmit={submit} noValidate>
        {form && <p className="form-error" role="alert">{form}</p>}
        <Field label="Username" error={fields.username}>
          {(p) => <input {...p} name="username" autoComplete="off" value={draft.values.username}
            onChange={(e) => draft.set('username', e.target.value)} required />}
        </Field>
        <Field label="Password" error={fields.password} hint="10 characters or more.">
          {(p) => <input {...p} name="password" type="password" autoComplete="new-password" value={draft.values.password}
            onChange={(e) => draft.set('password', e.target.value)} required />}
        </Field>
        <Field label="Role" error={fields.role}>
          {(p) => (
            <select {...p} name="role" value={draft.values.role} onChange={(e) => draft.set('role', e.target.value)}>
              {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
            </select>
          )}
        </Field>
        <Field label="Email" error={fields.email} hint="Optional.">
          {(p) => <input {...p} name="email" type="email" value={draft.values.email}
            onChange={(e) => draft.set('email', e.target.value)} />}
        </Field>
        <button type="submit" disabled={busy}>Add user</button>
      </form>
    </section>
  );
}
