import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useDraft, useResource, useSubmit } from '../hooks.js';
import { errorsByField, humanMessage } from '../messages.js';

/** The switch's built-in hold music (app/media/moh.py BUILT_IN_NAMES), then the account's uploads (/api/moh). */
export const BUILT_IN_MOH = [
  { value: 'default', label: 'Shipped music (default)' },
  { value: 'moh', label: 'The switch\'s music stream' },
];
const STRATEGIES = [
  { value: 'longest_idle', label: 'Longest idle agent' },
  { value: 'round_robin', label: 'Round robin' },
  { value: 'fewest_calls', label: 'Fewest calls' },
  { value: 'ring_all', label: 'Ring all' },
];
const NUMBER_FIELDS = [
  ['max_wait_seconds', 'Maximum wait (seconds)'],
  ['service_level_seconds', 'Service level target (seconds)'],
  ['offer_timeout_seconds', 'Offer timeout (seconds)'],
  ['wrap_up_seconds', 'Wrap-up (seconds)'],
];
const FIELDS = ['name', 'moh', 'strategy', ...NUMBER_FIELDS.map(([name]) => name)];
// codes of /api/queues that belong beside one field
const QUEUE_CODE_FIELD = { queue_name_taken: 'name', unknown_moh: 'moh' };
const NEW_QUEUE = { name: '', moh: 'default', strategy: 'longest_idle', max_wait_seconds: '300',
  service_level_seconds: '20', offer_timeout_seconds: '20', wrap_up_seconds: '10' };

function queueErrors(error) {
  if (error && QUEUE_CODE_FIELD[error.code]) {
    return { fields: { [QUEUE_CODE_FIELD[error.code]]: humanMessage(error) }, form: null };
  }
  return errorsByField(error && !error.isOutage ? error : null, FIELDS);
}

/** The form's values as the API's body: numbers as numbers, an empty number left out. */
export function queueBody(values) {
  const body = { name: values.name.trim(), moh: values.moh, strategy: values.strategy };
  for (const [name] of NUMBER_FIELDS) {
    if (String(values[name] ?? '').trim() !== '') body[name] = Number(values[name]);
  }
  return body;
}

/** Queues: the list (GET /api/queues) and adding one. */
export function Queues() {
  const { call } = useAuth();
  const list = useResource(() => call('/api/queues', { query: { limit: 200 } }), [call]);
  const items = list.data?.items || [];
  return (
    <>
      <h1>Queues</h1>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      {list.error && !list.error.isOutage && <p className="form-error" role="alert">{humanMessage(list.error)}</p>}
      <table>
        <caption className="visually-hidden">Queues of the account</caption>
        <thead>
          <tr><th scope="col">Queue</th><th scope="col">Hold music</th><th scope="col">Strategy</th>
            <th scope="col">Maximum wait</th><th scope="col">Service level target</th></tr>
        </thead>
        <tbody>
          {items.map((q) => (
            <tr key={q.id}>
              <td><Link to={`/queues/${q.id}`}>{q.name}</Link></td>
              <td>{q.moh}</td>
              <td>{STRATEGIES.find((s) => s.value === q.strategy)?.label || q.strategy}</td>
              <td>{q.max_wait_seconds} s</td>
              <td>{q.service_level_seconds} s</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No queues yet.</p>}
      <AddQueue />
    </>
  );
}

function AddQueue() {
  const { call } = useAuth();
  const navigate = useNavigate();
  const draft = useDraft('add-queue', NEW_QUEUE);
  const { busy, error, submit } = useSubmit(async () => {
    const created = await call('/api/queues', { method: 'POST', body: queueBody(draft.values) });
    draft.reset(NEW_QUEUE);
    navigate(`/queues/${created.id}`);
  });

  return (
    <section aria-labelledby="add-queue">
      <h2 id="add-queue">Add a queue</h2>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => submit()} />
      <QueueForm values={draft.values} set={draft.set} error={error} busy={busy} onSubmit={submit} action="Add queue" />
    </section>
  );
}

function QueueForm({ values, set, error, busy, onSubmit, action }) {
  const { call } = useAuth();
  const music = useResource(() => call('/api/moh'), [call]);
  const uploaded = (music.data?.items || []).map((m) => m.name);
  const known = new Set([...BUILT_IN_MOH.map((m) => m.value), ...uploaded]);
  const { fields, form } = queueErrors(error);
  return (
    <form onSubmit={onSubmit} noValidate>
      {form && <p className="form-error" role="alert">{form}</p>}
      <Field label="Queue name" error={fields.name} hint="The name the queue verb uses; unique in the account.">
        {(p) => <input {...p} name="name" value={values.name} onChange={(e) => set('name', e.target.value)} required />}
      </Field>
      <Field label="Hold music" error={fields.moh || (music.error ? 'Your uploaded music could not be listed; the built-in music is offered.' : null)}
        hint="Built in, or a file uploaded to the account (PUT /api/moh/:name).">
        {(p) => (
          <select {...p} name="moh" value={values.moh} onChange={(e) => set('moh', e.target.value)}>
            <optgroup label="Built in">
              {BUILT_IN_MOH.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
            </optgroup>
            {uploaded.length > 0 && (
              <optgroup label="Uploaded">
                {uploaded.map((name) => <option key={name} value={name}>{name}</option>)}
              </optgroup>
            )}
            {!known.has(values.moh) && <option value={values.moh}>{values.moh}</option>}
          </select>
        )}
      </Field>
      <Field label="Strategy" error={fields.strategy} hint="How the agent for the first waiting caller is chosen within the lowest tier.">
        {(p) => (
          <select {...p} name="strategy" value={values.strategy} onChange={(e) => set('strategy', e.target.value)}>
            {STRATEGIES.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
          </select>
        )}
      </Field>
      {NUMBER_FIELDS.map(([name, label]) => (
        <Field key={name} label={label} error={fields[name]}>
          {(p) => <input {...p} name={name} inputMode="numeric" value={values[name]} onChange={(e) => set(name, e.target.value)} />}
        </Field>
      ))}
      <button type="submit" disabled={busy}>{action}</button>
    </form>
  );
}

function asValues(queue) {
  return Object.fromEntries(FIELDS.map((name) => [name, queue[name] === null || queue[name] === undefined ? '' : String(queue[name])]));
}

/** One queue: its settings (PATCH /api/queues/:id), and its agents with their tier and registration. */
export function QueueDetail() {
  const { id } = useParams();
  const { call } = useAuth();
  const queue = useResource(() => call(`/api/queues/${id}`), [call, id]);
  return (
    <>
      <p><Link to="/queues">All queues</Link></p>
      <h1>Queue {queue.data?.name || ''}</h1>
      <OutageBanner error={queue.error?.isOutage ? queue.error : null} onRetry={queue.reload} />
      {queue.error && !queue.error.isOutage && <p className="form-error" role="alert">{humanMessage(queue.error)}</p>}
      {queue.data && <EditQueue key={queue.data.id} queue={queue.data} onSaved={queue.setData} />}
      {queue.data && <QueueAgents queueId={queue.data.id} />}
    </>
  );
}

function EditQueue({ queue, onSaved }) {
  const { call } = useAuth();
  const draft = useDraft(`queue:${queue.id}`, asValues(queue));
  const [saved, setSaved] = useState(false);
  const { busy, error, submit } = useSubmit(async () => {
    setSaved(false);
    const updated = await call(`/api/queues/${queue.id}`, { method: 'PATCH', body: queueBody(draft.values) });
    draft.reset(asValues(updated));
    onSaved(updated);
    setSaved(true);
  });

  return (
    <section aria-labelledby="queue-settings">
      <h2 id="queue-settings">Settings</h2>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => submit()} />
      {saved && <p className="saved" role="status">Saved.</p>}
      <QueueForm values={draft.values} set={draft.set} error={error} busy={busy} onSubmit={submit} action="Save queue" />
    </section>
  );
}

function registrationText(agent) {
  const r = agent.registration;
  if (!r) return 'Unknown (registrations could not be read)';
  if (r.registered) return `Registered (${r.transport || 'sip'})`;
  return 'Not registered';
}

/** The account's agents: this queue's members with their tier, and the others to add. */
function QueueAgents({ queueId }) {
  const { call } = useAuth();
  const agents = useResource(() => call('/api/agents', { query: { limit: 200 } }), [call]);
  const [error, setError] = useState(null);
  const [tiers, setTiers] = useState({});
  const items = agents.data?.items || [];
  const tierOf = (agent) => (agent.memberships || []).find((m) => m.queue_id === queueId)?.tier;

  async function setMembership(agent, tier) {
    setError(null);
    const others = (agent.memberships || []).filter((m) => m.queue_id !== queueId);
    const memberships = tier === null ? others : [...others, { queue_id: queueId, tier }];
    try {
      const updated = await call(`/api/agents/${agent.id}`, { method: 'PATCH', body: { memberships } });
      agents.setData({ ...agents.data, items: items.map((a) => (a.id === updated.id ? updated : a)) });
    } catch (err) {
      setError({ agent: agent.id, error: err });
    }
  }

  return (
    <section aria-labelledby="queue-agents">
      <h2 id="queue-agents">Agents and tiers</h2>
      <OutageBanner error={agents.error?.isOutage ? agents.error : null} onRetry={agents.reload} />
      {error && <p className="form-error" role="alert">{humanMessage(error.error)}</p>}
      <table>
        <caption className="visually-hidden">The account's agents: member of this queue or not, tier, state and registration</caption>
        <thead>
          <tr><th scope="col">Agent</th><th scope="col">State</th><th scope="col">Registration</th>
            <th scope="col">Tier</th><th scope="col">Membership</th></tr>
        </thead>
        <tbody>
          {items.map((agent) => {
            const tier = tierOf(agent);
            const typed = tiers[agent.id] ?? (tier ?? 1);
            return (
              <tr key={agent.id}>
                <th scope="row">{agent.username}</th>
                <td>{agent.state.replace('_', ' ')}</td>
                <td>{registrationText(agent)}</td>
                <td>
                  <label className="visually-hidden" htmlFor={`tier-${agent.id}`}>Tier of {agent.username}</label>
                  <input id={`tier-${agent.id}`} className="tier" inputMode="numeric" value={typed}
                    onChange={(e) => setTiers((t) => ({ ...t, [agent.id]: e.target.value }))} />
                </td>
                <td className="actions">
                  {tier === undefined
                    ? <button type="button" onClick={() => setMembership(agent, Number(typed))}>Add {agent.username}</button>
                    : <>
                      <button type="button" onClick={() => setMembership(agent, Number(typed))}>Save tier of {agent.username}</button>
                      <button type="button" onClick={() => setMembership(agent, null)}>Remove {agent.username}</button>
                    </>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {!agents.loading && !agents.error && items.length === 0 && <p role="status">The account has no agents yet.</p>}
    </section>
  );
}
