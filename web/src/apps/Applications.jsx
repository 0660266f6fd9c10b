import { useEffect, useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useCursorPages, useDraft, useResource, useSubmit } from '../hooks.js';
import { humanMessage } from '../messages.js';
import { LoadFailed } from '../routing/Shell.jsx';
import { VerbForm } from '../flows/VerbForm.jsx';
import { problemsOfVerb, verbFields } from '../flows/verbForm.js';
import './apps.css';
import { NEW_APPLICATION, appBody, appErrors, appValues, parseVerbList, words } from './appForm.js';

const CHECK_DELAY_MS = 400; // the verb list is checked once typing pauses, not on every key
const PAGE_SIZE = 50; // a dedicated `Webhook — <number>` application per number makes long lists

/** /applications (the list, adding one) and /applications/:id (its settings, Try it). */
export function ApplicationsRoutes() {
  return (
    <Routes>
      <Route index element={<ApplicationList />} />
      <Route path=":id" element={<ApplicationPage />} />
    </Routes>
  );
}

/** What answers a call, by SPEC's handling order: the flow, else the hook, else the verb list. */
export function answeredBy(app) {
  if (app.call_flow_sid) return 'Call flow';
  if (app.call_hook_url) return /^wss?:/i.test(app.call_hook_url) ? 'WebSocket handler' : 'Webhook';
  if (app.app_json) return 'Verb list (app_json)';
  return 'Nothing (calls are refused)';
}

function ApplicationList() {
  const { call } = useAuth();
  const list = useCursorPages(call, '/api/applications', { limit: PAGE_SIZE }, [call]);
  const { items, nextCursor, loadMore } = list;
  return (
    <>
      <h1>Applications</h1>
      <p className="hint">An application is what answers a phone number's calls: a call flow, your server (webhook), or a static verb list.</p>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      {list.error && !list.error.isOutage && <p className="form-error" role="alert">{humanMessage(list.error)}</p>}
      <table>
        <caption className="visually-hidden">Applications of the account</caption>
        <thead><tr><th scope="col">Application</th><th scope="col">Answers with</th><th scope="col">Call hook URL</th></tr></thead>
        <tbody>
          {items.map((a) => (
            <tr key={a.id}>
              <td><Link to={`/applications/${a.id}`}>{a.name}</Link></td>
              <td>{answeredBy(a)}</td>
              <td>{a.call_hook_url ? <code className="wrap">{a.call_hook_method} {a.call_hook_url}</code> : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No applications yet.</p>}
      <OutageBanner error={list.moreError?.isOutage ? list.moreError : null} onRetry={loadMore} />
      {list.moreError && !list.moreError.isOutage && <p className="form-error" role="alert">{humanMessage(list.moreError)}</p>}
      {nextCursor && <button type="button" onClick={loadMore}>Load more</button>}
      <section aria-labelledby="add-application">
        <h2 id="add-application">Add an application</h2>
        <ApplicationForm draftKey="add-application" initial={NEW_APPLICATION} action="Add application"
          send={(body) => call('/api/applications', { method: 'POST', body })} after={(created, navigate) => navigate(`/applications/${created.id}`)} />
      </section>
    </>
  );
}

function ApplicationPage() {
  const { id } = useParams();
  const { call } = useAuth();
  const navigate = useNavigate();
  const app = useResource(() => call(`/api/applications/${id}`), [call, id]);
  const [deleteError, setDeleteError] = useState(null);
  if (app.error && !app.data) {
    return <LoadFailed title="Application" error={app.error} onRetry={app.reload} back="/applications" backLabel="All applications" />;
  }
  async function remove() {
    if (!window.confirm(`Delete the application ${app.data.name}?`)) return;
    try {
      await call(`/api/applications/${id}`, { method: 'DELETE' });
      sessionStorage.removeItem(`console:draft:application:${id}`);
      navigate('/applications');
    } catch (error) {
      setDeleteError(error);
    }
  }
  return (
    <>
      <p><Link to="/applications">All applications</Link></p>
      <h1>Application {app.data?.name || ''}</h1>
      {app.loading && !app.data && <p role="status">Loading…</p>}
      {app.data && (
        <>
          <p>Answers with: <strong>{answeredBy(app.data)}</strong></p>
          <ApplicationForm key={app.data.id} draftKey={`application:${id}`} initial={appValues(app.data)} saved={app.data}
            action="Save application" send={(body) => call(`/api/applications/${id}`, { method: 'PATCH', body })}
            after={(updated) => app.setData(updated)} />
          <TryIt app={app.data} />
          <section aria-labelledby="delete-application">
            <h2 id="delete-application">Delete</h2>
            {deleteError && <p className="form-error" role="alert">{words(deleteError)}</p>}
            <button type="button" className="danger" onClick={remove}>Delete application</button>
          </section>
        </>
      )}
    </>
  );
}

/**
 * Every field of an application. What is typed is kept (sessionStorage, the password never)
 * until a save succeeds; a refusal is shown beside its field, the verb list's problems with
 * their JSON Pointer.
 */
function ApplicationForm({ draftKey, initial, saved, action, send, after }) {
  const { call } = useAuth();
  const navigate = useNavigate();
  const draft = useDraft(draftKey, initial, ['basic_auth_password']);
  const flows = useResource(() => call('/api/call-flows', { query: { limit: 200 } }), [call]);
  const [local, setLocal] = useState({});
  const [done, setDone] = useState(false);
  const { submit, error, busy } = useSubmit(async () => {
    setDone(false);
    const { body, fields } = appBody(draft.values);
    setLocal(fields || {});
    if (fields) return;
    const result = await send(body);
    draft.reset(appValues(result));
    setDone(true);
    after(result, navigate);
  });
  const v = draft.values;
  const set = (name) => (e) => { draft.set(name, e.target.value); setDone(false); };
  const shown = appErrors(error);
  const fields = { ...shown.fields, ...local };
  const flowItems = flows.data?.items || [];
  return (
    <form onSubmit={submit} noValidate aria-label={action}>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => submit()} />
      {shown.form && <p className="form-error" role="alert">{shown.form}</p>}
      {done && <p className="saved" role="status">Saved.</p>}
      <Field label="Application name" error={fields.name}>
        {(p) => <input {...p} name="name" value={v.name} onChange={set('name')} />}
      </Field>
      <Field label="Call flow" error={fields.call_flow_sid} hint="When set, the visual flow engine handles the call (before the hook and the verb list).">
        {(p) => (
          <select {...p} name="call_flow_sid" value={v.call_flow_sid} onChange={set('call_flow_sid')}>
            <option value="">(none)</option>
            {flowItems.map((f) => <option key={f.id} value={f.id}>{f.name}</option>)}
            {v.call_flow_sid && !flowItems.some((f) => f.id === v.call_flow_sid) && <option value={v.call_flow_sid}>{v.call_flow_sid}</option>}
          </select>
        )}
      </Field>
      {v.call_flow_sid && <p><Link to={`/flows/${v.call_flow_sid}`}>Open this call flow in the editor</Link></p>}
      <Field label="Call hook URL" error={fields.call_hook_url} hint="Your server: an https:// webhook or a wss:// WebSocket handler, reachable from the internet.">
        {(p) => <input {...p} name="call_hook_url" className="wide" value={v.call_hook_url} onChange={set('call_hook_url')} />}
      </Field>
      <Field label="Method" error={fields.call_hook_method} hint="HTTP method for the webhook; default POST (POST carries the call payload).">
        {(p) => (
          <select {...p} name="call_hook_method" value={v.call_hook_method} onChange={set('call_hook_method')}>
            <option value="POST">POST</option>
            <option value="GET">GET</option>
          </select>
        )}
      </Field>
      <Field label="Basic authentication username" error={fields.basic_auth_username}>
        {(p) => <input {...p} name="basic_auth_username" autoComplete="off" value={v.basic_auth_username} onChange={set('basic_auth_username')} />}
      </Field>
      <Field label="Basic authentication password" error={fields.basic_auth_password}
        hint={saved?.has_basic_auth_password ? 'A password is set. It is never shown; type a new one to replace it.' : 'Write-only: stored encrypted, never shown.'}>
        {(p) => <input {...p} type="password" name="basic_auth_password" autoComplete="new-password" value={v.basic_auth_password} onChange={set('basic_auth_password')} />}
      </Field>
      <Field label="Call status hook URL" error={fields.call_status_hook_url} hint="Receives POSTed call-status updates (https://).">
        {(p) => <input {...p} name="call_status_hook_url" className="wide" value={v.call_status_hook_url} onChange={set('call_status_hook_url')} />}
      </Field>
      <VerbListField value={v.app_json} onChange={set('app_json')} error={fields.app_json} saveProblems={shown.verbProblems} />
      <Field label="Language" error={fields.language} hint="Application-level default used by the say verb, e.g. en-US.">
        {(p) => <input {...p} name="language" value={v.language} onChange={set('language')} />}
      </Field>
      <Field label="Voice" error={fields.voice} hint="Application-level default used by the say verb.">
        {(p) => <input {...p} name="voice" value={v.voice} onChange={set('voice')} />}
      </Field>
      <button type="submit" disabled={busy}>{action}</button>
    </form>
  );
}

/** The server's verdict on the typed verb list (POST /api/applications/validate). */
function useVerbCheck(text) {
  const { call } = useAuth();
  const [verdict, setVerdict] = useState({ state: 'empty' });
  useEffect(() => {
    const parsed = parseVerbList(text);
    if (parsed.error) { setVerdict({ state: 'not_json', message: parsed.error }); return undefined; }
    if (parsed.value === null) { setVerdict({ state: 'empty' }); return undefined; }
    let cancelled = false;
    setVerdict((v) => ({ ...v, state: 'checking' }));
    const timer = setTimeout(async () => {
      try {
        const result = await call('/api/applications/validate', { method: 'POST', body: { app_json: parsed.value } });
        if (!cancelled) setVerdict({ state: result.valid ? 'valid' : 'invalid', result });
      } catch (error) {
        if (!cancelled) setVerdict({ state: 'failed', message: humanMessage(error) });
      }
    }, CHECK_DELAY_MS);
    return () => { cancelled = true; clearTimeout(timer); };
  }, [call, text]);
  return verdict;
}

function VerbListField({ value, onChange, error, saveProblems }) {
  const verdict = useVerbCheck(value);
  const problems = verdict.result?.errors || [];
  const warnings = verdict.result?.warnings || [];
  return (
    <div className="verb-list">
      <Field label="Verb list (app_json)" error={error}
        hint="Static list of verbs, used when no flow and no hook handle the call; with a hook, the fallback the caller hears if your server fails. Checked by the server as you type.">
        {(p) => <textarea {...p} name="app_json" rows={10} spellCheck={false} value={value} onChange={onChange} />}
      </Field>
      <div className="verb-check" role="status" aria-live="polite">
        {verdict.state === 'checking' && <p className="hint">Checking…</p>}
        {verdict.state === 'not_json' && <p className="field-error">{verdict.message}</p>}
        {verdict.state === 'failed' && <p className="field-error">Not checked: {verdict.message}</p>}
        {verdict.state === 'valid' && <p className="saved">The server accepts it: {verdict.result.verbs.join(', ')}.</p>}
        {verdict.state === 'invalid' && <p className="field-error">The server would refuse it:</p>}
      </div>
      {[...problems, ...(verdict.state === 'valid' ? [] : saveProblems)].length > 0 && (
        <ul className="verb-problems" aria-label="Problems in the verb list">
          {[...problems, ...(verdict.state === 'valid' ? [] : saveProblems)].map((p) => (
            <li key={`${p.path}:${p.message}`}><code>{p.path || '/'}</code> {p.message}</li>
          ))}
        </ul>
      )}
      {warnings.length > 0 && (
        <ul className="verb-warnings" aria-label="Warnings about the verb list">
          {warnings.map((w) => <li key={`${w.path}:${w.message}`}><code>{w.path}</code> {w.message}</li>)}
        </ul>
      )}
      <VerbListForms text={value} onChange={onChange}
        problems={[...problems, ...(verdict.state === 'valid' ? [] : saveProblems)]} />
    </div>
  );
}

/** Each verb of the list that has a form (say, play, gather, dial, record, hangup, redirect) as
 * that form; a change rewrites the list's text, which the server checks again as typed. */
function VerbListForms({ text, onChange, problems }) {
  const parsed = parseVerbList(text);
  const list = Array.isArray(parsed.value) ? parsed.value : [];
  const shown = list.map((verb, index) => ({ verb, index }))
    .filter(({ verb }) => verb && typeof verb === 'object' && verbFields(verb.verb).length > 0);
  if (!shown.length) return null;
  const write = (index, verb) => {
    const next = list.map((v, i) => (i === index ? verb : v));
    onChange({ target: { value: JSON.stringify(next, null, 2) } });
  };
  return (
    <details className="verb-forms">
      <summary>Edit the verbs in forms</summary>
      {shown.map(({ verb, index }) => (
        <VerbForm key={`${index}:${verb.verb}`} verb={verb} legend={`Verb ${index + 1}: ${verb.verb}`} prefix={`verb-${index}-`}
          problems={problemsOfVerb(problems, index)} onChange={(v) => write(index, v)} />
      ))}
    </details>
  );
}

const OUTCOME = {
  accepted: 'Accepted: the call would run these steps.',
  rejected: 'Rejected: the call would not run this reply.',
  failed: 'Failed: no usable reply. The caller would hear the apology (or the verb list as the fallback).',
};

/** "Try it": the first request of a test call to the saved hook, and what the call would do
 * (POST /api/applications/:id/try, the code `sbc webhook try` runs). */
function TryIt({ app }) {
  const { call } = useAuth();
  const [values, setValues] = useState({ from: '15550100001', to: '15550100002', direction: 'inbound' });
  const [result, setResult] = useState(null);
  const { submit, error, busy } = useSubmit(async () => {
    setResult(null);
    setResult(await call(`/api/applications/${app.id}/try`, { method: 'POST', body: values }));
  });
  const set = (name) => (e) => setValues((v) => ({ ...v, [name]: e.target.value }));
  const details = error?.code === 'validation_failed' ? error.details?.json || {} : {};
  return (
    <section aria-labelledby="try-it">
      <h2 id="try-it">Try it</h2>
      <p className="hint">Sends the first request of a test call to the saved Call hook URL, signed and authenticated as a call would be,
        and shows what the call would do with the reply. Nothing rings. Save your changes first: the saved settings are tried.</p>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => submit()} />
      {error && !error.isOutage && error.code !== 'validation_failed' && <p className="form-error" role="alert">{words(error)}</p>}
      <form className="inline" onSubmit={submit} noValidate aria-label="Try it">
        <Field label="From" error={details.from?.join(' ')}>{(p) => <input {...p} name="from" inputMode="numeric" value={values.from} onChange={set('from')} />}</Field>
        <Field label="To" error={details.to?.join(' ')}>{(p) => <input {...p} name="to" inputMode="numeric" value={values.to} onChange={set('to')} />}</Field>
        <Field label="Direction">
          {(p) => (
            <select {...p} name="direction" value={values.direction} onChange={set('direction')}>
              <option value="inbound">inbound</option>
              <option value="outbound">outbound</option>
            </select>
          )}
        </Field>
        <button type="submit" disabled={busy}>{busy ? 'Trying…' : 'Try it'}</button>
      </form>
      {result && (
        <div className={`try-result try-${result.outcome}`} aria-live="polite">
          <p className="try-request"><code>{result.request.method} {result.request.url}</code>
            {result.request.signed ? ' (signed: X-Signature)' : ''}{result.request.basic_auth ? ' (Basic authentication)' : ''}
            {result.elapsed_ms !== null ? ` — reply in ${Math.round(result.elapsed_ms)} ms` : ''}</p>
          <p className={`try-outcome ${result.outcome === 'accepted' ? 'saved' : 'form-error'}`} role="status">{OUTCOME[result.outcome]}</p>
          {result.steps.length > 0 && <ol className="try-steps">{result.steps.map((s, i) => <li key={i}>{s}</li>)}</ol>}
          {result.errors.length > 0 && <ul className="try-errors">{result.errors.map((s, i) => <li key={i}>{s}</li>)}</ul>}
          {result.warnings.length > 0 && <ul>{result.warnings.map((s, i) => <li key={i}>warning {s}</li>)}</ul>}
          {result.failure && <p className="try-failure">{result.failure.line}</p>}
          {result.failure?.hint && <p className="hint">{result.failure.hint}</p>}
          <details>
            <summary>The request body</summary>
            <pre>{JSON.stringify(result.request.body, null, 2)}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
