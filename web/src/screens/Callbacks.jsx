import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useCursorPages, useResource, useSubmit } from '../hooks.js';
import { errorsByField, humanMessage } from '../messages.js';
import { CALLBACK_STATUSES, callbackActions, rescheduleBody, toLocalInput } from './callbacks.js';

const PAGE_SIZE = 50;
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/**
 * Callbacks: one queue's callbacks in dispatch order (GET /api/queues/:id/callbacks, envelope
 * pages), filtered by queue and status (kept in the address), with Cancel and Reschedule on a
 * pending one. The API is per queue, so a queue is always chosen (the first by default).
 */
export function Callbacks() {
  const { call } = useAuth();
  const [params, setParams] = useSearchParams();
  const queues = useResource(() => call('/api/queues', { query: { limit: 200 } }), [call]);
  const queueItems = queues.data?.items || [];
  const queueId = params.get('queue_id') || queueItems[0]?.id || '';
  const status = params.get('status') || '';

  function setFilter(name, value) {
    const next = { queue_id: queueId, status, [name]: value };
    setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v)));
  }

  return (
    <>
      <h1>Callbacks</h1>
      <OutageBanner error={queues.error?.isOutage ? queues.error : null} onRetry={queues.reload} />
      {queues.error && !queues.error.isOutage && <p className="form-error" role="alert">{humanMessage(queues.error)}</p>}
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Queue">
          {(p) => (
            <select {...p} value={queueId} onChange={(e) => setFilter('queue_id', e.target.value)} disabled={!queueItems.length}>
              {queueItems.map((q) => <option key={q.id} value={q.id}>{q.name}</option>)}
            </select>
          )}
        </Field>
        <Field label="Status">
          {(p) => (
            <select {...p} value={status} onChange={(e) => setFilter('status', e.target.value)}>
              <option value="">Any</option>
              {CALLBACK_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          )}
        </Field>
      </form>
      {queues.loading && <p role="status">Loading…</p>}
      {!queues.loading && !queues.error && !queueItems.length && <p role="status">No queues yet: callbacks belong to a queue.</p>}
      {queueId && <CallbackList key={`${queueId}|${status}`} queueId={queueId} status={status} />}
    </>
  );
}

function CallbackList({ queueId, status }) {
  const { call } = useAuth();
  const path = `/api/queues/${queueId}/callbacks`;
  const list = useCursorPages(call, path, { envelope: 'true', limit: PAGE_SIZE, status }, [call, path, status]);
  const [changed, setChanged] = useState({}); // id -> the API's answer after a cancel or reschedule
  const [notice, setNotice] = useState(null);
  const items = list.items.map((c) => changed[c.id] || c);
  const update = (row, text) => { setChanged((m) => ({ ...m, [row.id]: row })); setNotice(text); };
  return (
    <>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <OutageBanner error={list.moreError?.isOutage ? list.moreError : null} onRetry={list.loadMore} />
      {list.error && !list.error.isOutage && <p className="form-error" role="alert">{humanMessage(list.error)}</p>}
      {notice && <p className="saved" role="status">{notice}</p>}
      <table>
        <caption className="visually-hidden">Callbacks of the queue, in the order they are dialled</caption>
        <thead>
          <tr>
            <th scope="col">Number</th><th scope="col">Priority</th><th scope="col">Requested</th>
            <th scope="col">Not before</th><th scope="col">Status</th><th scope="col">Attempts</th>
            <th scope="col">Last attempt</th><th scope="col">Notes</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((c) => <CallbackRow key={c.id} callback={c} path={path} onChanged={update} />)}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No callbacks match.</p>}
      {list.nextCursor && <button type="button" onClick={list.loadMore}>Load more</button>}
    </>
  );
}

// the API's refusals that mean "this row is out of date": the page reads the callback again
const STALE = new Set(['callback_in_progress', 'callback_finished', 'callback_cancelled']);

function CallbackRow({ callback: c, path, onChanged }) {
  const { call } = useAuth();
  const [open, setOpen] = useState(false);
  const actions = callbackActions(c);
  /** `action`, and on a refusal that means the row is stale, the row as the API has it now. */
  async function fresh(action) {
    try {
      return await action();
    } catch (err) {
      if (STALE.has(err.code)) call(`${path}/${c.id}`).then((row) => onChanged(row, null), () => {});
      throw err;
    }
  }
  const cancel = useSubmit(() => fresh(async () => {
    if (!window.confirm(`Cancel the callback to ${c.phone_number}?`)) return;
    await call(`${path}/${c.id}`, { method: 'DELETE' });
    onChanged({ ...c, status: 'cancelled' }, `The callback to ${c.phone_number} is cancelled.`);
    setOpen(false);
  }));
  return (
    <>
      <tr>
        <td>{c.phone_number}</td><td>{c.priority}</td><td>{when(c.requested_at)}</td>
        <td>{c.scheduled_at ? when(c.scheduled_at) : 'As soon as an agent is free'}</td>
        <td>{c.status}</td><td>{c.attempts} of {c.max_attempts}</td><td>{when(c.last_attempt_at)}</td>
        <td>{c.notes}</td>
        <td className="row-actions">
          {actions.includes('reschedule') && (
            <button type="button" className="secondary" aria-expanded={open} onClick={() => setOpen((o) => !o)}
              aria-label={`Reschedule ${c.phone_number}`}>Reschedule</button>
          )}
          {actions.includes('cancel') && (
            <button type="button" className="secondary" onClick={cancel.submit} disabled={cancel.busy}
              aria-label={`Cancel ${c.phone_number}`}>Cancel</button>
          )}
          {cancel.error && !cancel.error.isOutage && <p className="field-error" role="alert">{humanMessage(cancel.error)}</p>}
          <OutageBanner error={cancel.error?.isOutage ? cancel.error : null} onRetry={cancel.submit} />
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={9}>
            <Reschedule callback={c} path={path} fresh={fresh} onClose={() => setOpen(false)}
              onDone={(row) => { onChanged(row, `The callback to ${c.phone_number} is rescheduled.`); setOpen(false); }} />
          </td>
        </tr>
      )}
    </>
  );
}

function Reschedule({ callback: c, path, fresh, onDone, onClose }) {
  const { call } = useAuth();
  const [values, setValues] = useState({ scheduled_at: toLocalInput(c.scheduled_at), priority: String(c.priority) });
  const save = useSubmit(() => fresh(async () => {
    onDone(await call(`${path}/${c.id}`, { method: 'PATCH', body: rescheduleBody(values, c) }));
  }));
  const { fields, form } = errorsByField(save.error && !save.error.isOutage ? save.error : null, ['scheduled_at', 'priority']);
  const set = (name) => (e) => setValues((v) => ({ ...v, [name]: e.target.value }));
  return (
    <form onSubmit={save.submit} noValidate aria-label={`Reschedule the callback to ${c.phone_number}`}>
      <OutageBanner error={save.error?.isOutage ? save.error : null} onRetry={() => save.submit()} />
      {form && <p className="form-error" role="alert">{form}</p>}
      <Field label="Not before" error={fields.scheduled_at} hint="Your local time. Empty: as soon as an agent of the queue is free.">
        {(p) => <input {...p} type="datetime-local" value={values.scheduled_at} onChange={set('scheduled_at')} />}
      </Field>
      <Field label="Priority" error={fields.priority} hint="-1000 to 1000; higher is dialled first.">
        {(p) => <input {...p} inputMode="numeric" value={values.priority} onChange={set('priority')} />}
      </Field>
      <button type="submit" disabled={save.busy || !callbackActions(c).includes('reschedule')}>Save new time</button>
      {' '}<button type="button" className="secondary" onClick={onClose}>Close</button>
    </form>
  );
}
