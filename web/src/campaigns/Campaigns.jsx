import { useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { uploadCsv } from '../files.js';
import { useCursorPages, useResource, useSubmit } from '../hooks.js';
import { errorsByField, humanMessage } from '../messages.js';
import {
  ACTION_LABELS, CONTACT_STATUSES, DIALER_MODES, RETRY_OUTCOMES, WEEKDAYS,
  actionsFor, campaignBody, contactsUpload, formFromCampaign, liveFigures, progress, rowErrors,
} from './rules.js';
import { loadProgressCounts } from './progress.js';

const CHOICES_LIMIT = 200;
const FORM_FIELDS = ['name', 'dialer_mode', 'agent_group_ids', 'carrier_id', 'caller_id', 'window_start',
  'window_end', 'allowed_weekdays', 'retry_policy'];
const CAMPAIGN_MESSAGES = {
  campaign_not_ready: 'The campaign cannot dial yet: it needs a trunk, a caller ID and agent groups with agents.',
  illegal_transition: 'The campaign is not in a state that allows this.',
  campaign_active: 'Stop the campaign before deleting it.',
  caller_id_not_owned: 'The caller ID must be one of the account\'s phone numbers.',
};
const campaignMessage = (error) => CAMPAIGN_MESSAGES[error?.code] || humanMessage(error);

/** /campaigns/*: the list (with a new campaign's form) and one campaign. */
export function CampaignsRoutes() {
  return (
    <Routes>
      <Route index element={<CampaignList />} />
      <Route path=":id" element={<CampaignDetail />} />
    </Routes>
  );
}

function CampaignList() {
  const { call } = useAuth();
  const navigate = useNavigate();
  const list = useCursorPages(call, '/api/campaigns', { limit: 50 }, [call]);
  const [name, setName] = useState('');
  const [mode, setMode] = useState('preview');
  const create = useSubmit(async () => {
    const made = await call('/api/campaigns', { method: 'POST', body: { name, dialer_mode: mode } });
    navigate(`/campaigns/${made.id}`);
  });
  const { fields, form } = errorsByField(create.error && !create.error.isOutage ? create.error : null, ['name', 'dialer_mode']);
  return (
    <>
      <h1>Campaigns</h1>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <table>
        <caption className="visually-hidden">The account's campaigns</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Dialer mode</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
        <tbody>
          {list.items.map((c) => (
            <tr key={c.id}>
              <td><Link to={`/campaigns/${c.id}`}>{c.name}</Link></td>
              <td>{c.dialer_mode}</td><td>{c.status}</td><td>{new Date(c.created_at).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && list.items.length === 0 && <p>No campaigns yet.</p>}
      {list.nextCursor && <button type="button" onClick={list.loadMore}>Load more</button>}
      <h2>New campaign</h2>
      <form className="inline" onSubmit={create.submit} noValidate>
        {form && <p className="form-error" role="alert">{campaignMessage(create.error)}</p>}
        <OutageBanner error={create.error?.isOutage ? create.error : null} onRetry={create.submit} />
        <Field label="Name" error={fields.name}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Dialer mode" error={fields.dialer_mode}>
          {(p) => (
            <select {...p} value={mode} onChange={(e) => setMode(e.target.value)}>
              {DIALER_MODES.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          )}
        </Field>
        <button type="submit" disabled={create.busy}>Create campaign</button>
      </form>
    </>
  );
}

/** What the definition form chooses from: queues (agent groups), carriers (trunks), numbers. */
function useChoices(call) {
  return useResource(async () => {
    const list = (path) => call(path, { query: { limit: CHOICES_LIMIT } })
      .then((page) => (Array.isArray(page) ? page : page.items), () => []);
    const [queues, carriers, numbers] = await Promise.all([list('/api/queues'), list('/api/carriers'), list('/api/phone-numbers')]);
    return { queues, carriers, numbers };
  }, [call]);
}

function CampaignDetail() {
  const { id } = useParams();
  const { call } = useAuth();
  const loaded = useResource(() => call(`/api/campaigns/${id}`), [call, id]);
  const [changes, setChanges] = useState(0); // contacts imported or a state changed: progress again
  if (loaded.error && !loaded.data) {
    return (
      <>
        <p><Link to="/campaigns">Campaigns</Link></p>
        <h1>Campaign</h1>
        {loaded.error.isOutage ? <OutageBanner error={loaded.error} onRetry={loaded.reload} />
          : <p role="alert">{humanMessage(loaded.error)}</p>}
      </>
    );
  }
  if (!loaded.data) return <p role="status">Loading…</p>;
  const campaign = loaded.data;
  const changed = (next) => { if (next) loaded.setData(next); setChanges((n) => n + 1); };
  return (
    <>
      <p><Link to="/campaigns">Campaigns</Link></p>
      <h1>{campaign.name}</h1>
      <Controls campaign={campaign} onChanged={changed} />
      <Progress id={id} changes={changes} />
      <Definition key={campaign.id} campaign={campaign} onSaved={changed} />
      <Contacts id={id} changes={changes} onImported={() => changed(null)} />
    </>
  );
}

function Controls({ campaign, onChanged }) {
  const { call } = useAuth();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [last, setLast] = useState(null);
  async function run(action) {
    setBusy(true);
    setError(null);
    setLast(action);
    try {
      onChanged(await call(`/api/campaigns/${campaign.id}/${action}`, { method: 'POST', body: {} }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  const missing = error?.code === 'campaign_not_ready' && error.details;
  return (
    <section aria-labelledby="campaign-state">
      <h2 id="campaign-state">Status: <span data-testid="campaign-status">{campaign.status}</span></h2>
      {campaign.scheduled_at && <p>Starts at {new Date(campaign.scheduled_at).toLocaleString()}.</p>}
      <div className="actions">
        {actionsFor(campaign.status).map((a) => (
          <button key={a} type="button" disabled={busy} onClick={() => run(a)}>{ACTION_LABELS[a]}</button>
        ))}
      </div>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => run(last)} />
      {error && !error.isOutage && (
        <div role="alert" className="form-error">
          <p>{campaignMessage(error)}</p>
          {missing && <ul>{Object.entries(missing).map(([field, why]) => <li key={field}>{field}: {[].concat(why).join(' ')}</li>)}</ul>}
        </div>
      )}
    </section>
  );
}

/**
 * Progress: contacts by status, from the API's live figures (./progress.js).
 */
function Progress({ id, changes }) {
  const { call } = useAuth();
  const loaded = useResource(() => loadProgressCounts(call, id), [call, id, changes]);
  const counts = loaded.data?.counts || {};
  const { total, done, percent } = progress(counts);
  return (
    <section aria-labelledby="campaign-progress">
      <h2 id="campaign-progress">Progress</h2>
      <OutageBanner error={loaded.error} onRetry={loaded.reload} />
      <p><progress max={100} value={percent} aria-label="Contacts done" /> <span data-testid="progress-text">{done} of {total} contacts done ({percent}%)</span></p>
      <table className="progress-figures">
        <caption className="visually-hidden">Contacts by status</caption>
        <thead><tr>{CONTACT_STATUSES.map((s) => <th key={s} scope="col">{s.replace(/_/g, ' ')}</th>)}</tr></thead>
        <tbody><tr>{CONTACT_STATUSES.map((s) => <td key={s} className="figure" data-status={s}>{counts[s] || 0}</td>)}</tr></tbody>
      </table>
      <dl className="live-figures" aria-label="Live figures">
        {liveFigures(loaded.data?.figures).map((row) => (
          <div key={row.label} className={row.alert ? 'alert' : undefined}>
            <dt>{row.label}</dt>
            <dd>{row.value}{row.alert && <strong> — over the cap: dialling 1:1</strong>}</dd>
          </div>
        ))}
      </dl>
      <button type="button" className="secondary" onClick={loaded.reload}>Refresh progress</button>
    </section>
  );
}

function Definition({ campaign, onSaved }) {
  const { call } = useAuth();
  const choices = useChoices(call).data || { queues: [], carriers: [], numbers: [] };
  const [form, setForm] = useState(() => formFromCampaign(campaign));
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    onSaved(await call(`/api/campaigns/${campaign.id}`, { method: 'PATCH', body: campaignBody(form) }));
    setSaved(true);
  });
  const { fields, form: formError } = errorsByField(save.error && !save.error.isOutage ? save.error : null, FORM_FIELDS);
  const callerError = save.error?.code === 'caller_id_not_owned' ? campaignMessage(save.error) : fields.caller_id;
  const set = (name) => (e) => setForm((f) => ({ ...f, [name]: e.target.value }));
  const toggle = (name, value) => setForm((f) => ({ ...f,
    [name]: f[name].includes(value) ? f[name].filter((v) => v !== value) : [...f[name], value] }));
  const setRetry = (outcome, key) => (e) => setForm((f) => ({ ...f,
    retries: { ...f.retries, [outcome]: { ...f.retries[outcome], [key]: e.target.value } } }));
  return (
    <section aria-labelledby="campaign-definition">
      <h2 id="campaign-definition">Definition</h2>
      <form onSubmit={save.submit} noValidate>
        <OutageBanner error={save.error?.isOutage ? save.error : null} onRetry={save.submit} />
        {formError && save.error?.code !== 'caller_id_not_owned' && (
          <p className="form-error" role="alert">{CAMPAIGN_MESSAGES[save.error.code] || formError}</p>
        )}
        <Field label="Name" error={fields.name}>{(p) => <input {...p} value={form.name} onChange={set('name')} />}</Field>
        <Field label="Dialer mode" error={fields.dialer_mode}>
          {(p) => <select {...p} value={form.dialer_mode} onChange={set('dialer_mode')}>{DIALER_MODES.map((m) => <option key={m} value={m}>{m}</option>)}</select>}
        </Field>
        <fieldset>
          <legend>Agent groups</legend>
          {choices.queues.length === 0 && <p className="hint">No queues: create one under Queues.</p>}
          {choices.queues.map((q) => (
            <label key={q.id} className="choice">
              <input type="checkbox" checked={form.agent_group_ids.includes(q.id)} onChange={() => toggle('agent_group_ids', q.id)} /> {q.name}
            </label>
          ))}
          {fields.agent_group_ids && <p className="field-error">{fields.agent_group_ids}</p>}
        </fieldset>
        <Field label="Trunk" error={fields.carrier_id}>
          {(p) => (
            <select {...p} value={form.carrier_id} onChange={set('carrier_id')}>
              <option value="">None</option>
              {choices.carriers.map((c) => <option key={c.id} value={c.id}>{c.name}{c.platform ? ' (platform)' : ''}</option>)}
            </select>
          )}
        </Field>
        <Field label="Caller ID" hint="One of the account's phone numbers" error={callerError}>
          {(p) => (
            <select {...p} value={form.caller_id} onChange={set('caller_id')}>
              <option value="">None</option>
              {choices.numbers.map((n) => <option key={n.id} value={n.number}>{n.number}</option>)}
              {form.caller_id && !choices.numbers.some((n) => n.number === form.caller_id) && <option value={form.caller_id}>{form.caller_id}</option>}
            </select>
          )}
        </Field>
        <fieldset>
          <legend>Calling window (the contact's local time)</legend>
          <div className="inline-fields">
            <Field label="From" error={fields.window_start}>{(p) => <input {...p} type="time" value={form.window_start} onChange={set('window_start')} />}</Field>
            <Field label="Until" error={fields.window_end}>{(p) => <input {...p} type="time" value={form.window_end} onChange={set('window_end')} />}</Field>
          </div>
          <div role="group" aria-label="Days">
            {WEEKDAYS.map(([n, day]) => (
              <label key={n} className="choice inline-choice">
                <input type="checkbox" checked={form.allowed_weekdays.includes(n)} onChange={() => toggle('allowed_weekdays', n)} /> {day}
              </label>
            ))}
          </div>
          {fields.allowed_weekdays && <p className="field-error">{fields.allowed_weekdays}</p>}
        </fieldset>
        <fieldset>
          <legend>Retries</legend>
          <table>
            <thead><tr><th scope="col">Outcome</th><th scope="col">Delay (seconds)</th><th scope="col">Attempts at most</th></tr></thead>
            <tbody>
              {RETRY_OUTCOMES.map((o) => (
                <tr key={o}>
                  <th scope="row">{o.replace('_', ' ')}</th>
                  <td><input aria-label={`${o.replace('_', ' ')}: delay in seconds`} type="number" min="0" value={form.retries[o].delay_seconds} onChange={setRetry(o, 'delay_seconds')} /></td>
                  <td><input aria-label={`${o.replace('_', ' ')}: attempts at most`} type="number" min="1" max="10" value={form.retries[o].max_attempts} onChange={setRetry(o, 'max_attempts')} /></td>
                </tr>
              ))}
            </tbody>
          </table>
          {fields.retry_policy && <p className="field-error">{fields.retry_policy}</p>}
        </fieldset>
        <button type="submit" disabled={save.busy}>Save campaign</button>
        {saved && <p className="saved" role="status">Saved.</p>}
      </form>
    </section>
  );
}

function Contacts({ id, changes, onImported }) {
  const { call, token } = useAuth();
  const [status, setStatus] = useState('');
  const list = useCursorPages(call, `/api/campaigns/${id}/contacts`, { limit: 50, status }, [call, id, status, changes]);
  const [file, setFile] = useState(null);
  const [result, setResult] = useState(null);
  const upload = useSubmit(async () => {
    setResult(null);
    if (!file) throw Object.assign(new Error('Choose a CSV or JSON file first.'), { code: 'no_file' });
    const text = await file.text();
    const sent = contactsUpload(file.name, text);
    if (sent.kind === 'error') throw Object.assign(new Error(sent.message), { code: 'bad_file' });
    const answer = sent.kind === 'csv'
      ? await uploadCsv(`/api/campaigns/${id}/contacts/import`, { token, text: sent.text })
      : await call(`/api/campaigns/${id}/contacts`, { method: 'POST', body: sent.body });
    setResult(answer.created);
    onImported();
  });
  const rows = rowErrors(upload.error);
  const uploadMessage = upload.error && (upload.error.code === 'no_file' || upload.error.code === 'bad_file'
    ? upload.error.message : upload.error.message || humanMessage(upload.error));
  return (
    <section aria-labelledby="campaign-contacts">
      <h2 id="campaign-contacts">Contacts</h2>
      <form className="inline" onSubmit={upload.submit} noValidate>
        <Field label="Contacts file" hint="CSV with a phone_number column (name, time_zone, other columns as attributes), or JSON">
          {(p) => <input {...p} type="file" accept=".csv,.json,text/csv,application/json" onChange={(e) => setFile(e.target.files[0] || null)} />}
        </Field>
        <button type="submit" disabled={upload.busy}>Import contacts</button>
      </form>
      <OutageBanner error={upload.error?.isOutage ? upload.error : null} onRetry={upload.submit} />
      {upload.error && !upload.error.isOutage && (
        <div role="alert" className="form-error">
          <p>{uploadMessage}</p>
          {rows.length > 0 && (
            <table className="row-errors">
              <caption>Rows the server refused (nothing was imported)</caption>
              <thead><tr><th scope="col">Row</th><th scope="col">Field</th><th scope="col">Problem</th></tr></thead>
              <tbody>{rows.map((r) => <tr key={`${r.row}-${r.field}`}><td>{r.row}</td><td>{r.field}</td><td>{r.message}</td></tr>)}</tbody>
            </table>
          )}
        </div>
      )}
      {result != null && <p className="saved" role="status">Imported {result} contacts.</p>}
      <Field label="Show contacts">
        {(p) => (
          <select {...p} value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">All</option>
            {CONTACT_STATUSES.map((s) => <option key={s} value={s}>{s.replace(/_/g, ' ')}</option>)}
          </select>
        )}
      </Field>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <table>
        <caption className="visually-hidden">The campaign's contacts</caption>
        <thead><tr><th scope="col">Number</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last result</th><th scope="col">Disposition</th></tr></thead>
        <tbody>
          {list.items.map((c) => (
            <tr key={c.id}><td>{c.phone_number}</td><td>{c.name}</td><td>{c.status}</td><td>{c.attempts}</td><td>{c.last_result}</td><td>{c.disposition}</td></tr>
          ))}
        </tbody>
      </table>
      {!list.loading && list.items.length === 0 && <p>No contacts.</p>}
      {list.nextCursor && <button type="button" onClick={list.loadMore}>Load more</button>}
    </section>
  );
}
