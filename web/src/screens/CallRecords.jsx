import { useEffect, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { downloadWithToken } from '../files.js';
import { useCursorPages, useResource, useSubmit } from '../hooks.js';
import { errorsByField, humanMessage } from '../messages.js';
import { journeySteps } from './journey.js';
import { summaryTalk } from './summary.js';
import { Waveform } from './Waveform.jsx';

const PAGE_SIZE = 50;
const FILTERS = ['from', 'to', 'direction', 'status', 'number', 'agent_id', 'queue_id', 'call_id'];
const CHOICES_LIMIT = 200;
const STATUSES = ['completed', 'no-answer', 'busy', 'failed', 'canceled', 'refused'];

const seconds = (ms) => (ms == null ? '' : `${(ms / 1000).toFixed(1)} s`);
/** An agent's or queue's name; one deleted since is named by its id's start (none: empty). */
export const named = (name, id) => name || (id ? `deleted (${String(id).slice(0, 8)})` : '');
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');
/** datetime-local has no zone: the browser's local time, sent as an ISO instant (UTC). */
const toInstant = (local) => (local ? new Date(local).toISOString() : '');

/**
 * The agents and queues a filter can choose from. Listing them needs the queue-mgmt license
 * and the admin role (the queues: admin or supervisor); a list refused is not offered, and a
 * filter already in the address still applies.
 */
function useFilterChoices(call) {
  return useResource(async () => {
    const list = (path) => call(path, { query: { limit: CHOICES_LIMIT } }).then((page) => page.items, () => null);
    const [agents, queues] = await Promise.all([list('/api/agents'), list('/api/queues')]);
    return { agents, queues };
  }, [call]);
}

/**
 * Call records: the API's filters in the address (shareable), newest first, cursor pages; the
 * CSV export with the same filters (fetched with the token: a link cannot send it).
 */
export function CallRecords() {
  const { call, token } = useAuth();
  const [params, setParams] = useSearchParams();
  const applied = Object.fromEntries(FILTERS.map((f) => [f, params.get(f) || '']));
  const [form, setForm] = useState(applied);
  const key = FILTERS.map((f) => applied[f]).join('|');
  const filters = { ...applied, from: toInstant(applied.from), to: toInstant(applied.to) };
  const list = useCursorPages(call, '/api/call-records', { ...filters, limit: PAGE_SIZE }, [call, key]);
  const { items, nextCursor, loadMore } = list;
  const choices = useFilterChoices(call).data || {};
  const [exported, setExported] = useState(null);
  const exporter = useSubmit(async () => {
    setExported(null);
    const name = await downloadWithToken('/api/call-records/export', {
      token, query: filters, fallbackName: 'call-records.csv' });
    setExported(name);
  });

  function apply(event) {
    event.preventDefault();
    setParams(Object.fromEntries(Object.entries(form).filter(([, v]) => v)));
  }

  const set = (name) => (e) => setForm((f) => ({ ...f, [name]: e.target.value }));
  const { fields, form: formError } = errorsByField(list.error && !list.error.isOutage ? list.error : null, FILTERS);
  return (
    <>
      <h1>Call records</h1>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <OutageBanner error={list.moreError?.isOutage ? list.moreError : null} onRetry={loadMore} />
      <form className="filters" onSubmit={apply} noValidate>
        {formError && <p className="form-error" role="alert">{formError}</p>}
        <Field label="From" error={fields.from}>
          {(p) => <input {...p} type="datetime-local" value={form.from} onChange={set('from')} />}
        </Field>
        <Field label="To" error={fields.to}>
          {(p) => <input {...p} type="datetime-local" value={form.to} onChange={set('to')} />}
        </Field>
        <Field label="Direction" error={fields.direction}>
          {(p) => (
            <select {...p} value={form.direction} onChange={set('direction')}>
              <option value="">Any</option><option value="inbound">Inbound</option><option value="outbound">Outbound</option>
            </select>
          )}
        </Field>
        <Field label="Status" error={fields.status}>
          {(p) => (
            <select {...p} value={form.status} onChange={set('status')}>
              <option value="">Any</option>
              {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          )}
        </Field>
        <Field label="Number" hint="Caller or callee contains" error={fields.number}>
          {(p) => <input {...p} inputMode="tel" value={form.number} onChange={set('number')} />}
        </Field>
        {choices.agents && (
          <Field label="Agent" error={fields.agent_id}>
            {(p) => (
              <select {...p} value={form.agent_id} onChange={set('agent_id')}>
                <option value="">Any</option>
                {choices.agents.map((a) => <option key={a.id} value={a.id}>{a.username}</option>)}
              </select>
            )}
          </Field>
        )}
        {choices.queues && (
          <Field label="Queue" error={fields.queue_id}>
            {(p) => (
              <select {...p} value={form.queue_id} onChange={set('queue_id')}>
                <option value="">Any</option>
                {choices.queues.map((q) => <option key={q.id} value={q.id}>{q.name}</option>)}
              </select>
            )}
          </Field>
        )}
        <Field label="Call ID" error={fields.call_id}>
          {(p) => <input {...p} value={form.call_id} onChange={set('call_id')} />}
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      <div className="actions">
        <button type="button" className="secondary" onClick={exporter.submit} disabled={exporter.busy}>
          Export CSV
        </button>
        <p className="hint">The applied filters, newest first, at most 10,000 rows.</p>
      </div>
      <OutageBanner error={exporter.error?.isOutage ? exporter.error : null} onRetry={exporter.submit} />
      {exporter.error && !exporter.error.isOutage && <p className="form-error" role="alert">{humanMessage(exporter.error)}</p>}
      {exporter.busy && <p role="status">Exporting…</p>}
      {exported && <p className="saved" role="status">Exported {exported}.</p>}
      <table>
        <caption className="visually-hidden">Call records, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th><th scope="col">Direction</th><th scope="col">Caller</th>
            <th scope="col">Callee</th><th scope="col">Agent</th><th scope="col">Queue</th>
            <th scope="col">Status</th><th scope="col">Talk</th>
          </tr>
        </thead>
        <tbody>
          {items.map((r) => (
            <tr key={r.id}>
              <td><Link to={`/calls/${r.id}`}>{when(r.started_at)}</Link></td>
              <td>{r.direction}</td><td>{r.from_number}</td><td>{r.to_number}</td>
              <td>{named(r.agent_name, r.agent_id)}</td><td>{named(r.queue_name, r.queue_id)}</td>
              <td>{r.status}</td><td>{seconds(r.talk_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No call records match.</p>}
      {nextCursor && <button type="button" onClick={loadMore}>Load more</button>}
    </>
  );
}

/** One record: its facts, interaction summary, segments and recordings (played from a blob). */
export function CallRecordDetail() {
  const { id } = useParams();
  const { call } = useAuth();
  const loaded = useResource(async () => {
    const [record, recordings, transcript] = await Promise.all([
      call(`/api/call-records/${id}`), call(`/api/call-records/${id}/recordings`),
      call(`/api/call-records/${id}/transcript`).catch((err) => {
        if (err.code === 'transcript_not_found') return null; // not written (yet) by the media workers
        throw err;
      })]);
    return { record, recordings: recordings.items, transcript };
  }, [call, id]);
  if (loaded.error && !loaded.data) {
    return (
      <>
        <h1>Call record</h1>
        {loaded.error.isOutage ? <OutageBanner error={loaded.error} onRetry={loaded.reload} />
          : <p role="alert">{humanMessage(loaded.error)}</p>}
      </>
    );
  }
  if (!loaded.data) return <p role="status">Loading…</p>;
  const { record: r, recordings, transcript } = loaded.data;
  const s = r.summary;
  return (
    <>
      <p><Link to="/calls">Call records</Link></p>
      <h1>Call of {when(r.started_at)}</h1>
      <dl className="facts">
        <dt>Direction</dt><dd>{r.direction}</dd>
        <dt>Caller</dt><dd>{r.from_number}</dd>
        <dt>Callee</dt><dd>{r.to_number}</dd>
        <dt>Agent</dt><dd>{named(r.agent_name, r.agent_id) || 'None'}</dd>
        <dt>Queue</dt><dd>{named(r.queue_name, r.queue_id) || 'None'}</dd>
        <dt>Status</dt><dd>{r.status}{r.hangup_cause ? ` (${r.hangup_cause})` : ''}</dd>
        <dt>Duration</dt><dd>{seconds(r.duration_ms)}</dd>
        <dt>Call ID</dt><dd>{r.call_id}</dd>
      </dl>
      <h2>Journey</h2>
      {r.journey ? (
        <ol className="journey" aria-label="The call's path, in order">
          {journeySteps(r.journey).map((step, n) => (
            // eslint-disable-next-line react/no-array-index-key -- a step may repeat (queue twice)
            <li key={n}><span className="step-kind">{step.kind}</span>{step.detail && <> {step.detail}</>}</li>
          ))}
        </ol>
      ) : <p>No journey was recorded for this call.</p>}
      <h2>Interaction summary</h2>
      {s ? (
        <dl className="facts">
          <dt>Queue wait</dt><dd>{seconds(s.queue_wait_ms)}</dd>
          <dt>In the application (IVR)</dt><dd>{seconds(s.ivr_ms)}</dd>
          <dt>Talk</dt><dd><SummaryTalk record={r} summary={s} /></dd>
          <dt>Hold</dt><dd>{s.hold_count} ({seconds(s.hold_ms)})</dd>
          <dt>AHT</dt><dd>{seconds(s.aht_ms)}</dd>
          <dt>Abandoned</dt><dd>{s.abandoned ? 'yes' : 'no'}</dd>
        </dl>
      ) : <p>No interaction summary for this call.</p>}
      <h2>Segments</h2>
      {r.segments?.length ? (
        <table>
          <caption className="visually-hidden">The agents who had the conversation, in order</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th><th scope="col">Started</th><th scope="col">Talk</th><th scope="col">Hold</th>
              <th scope="col">Handle</th><th scope="col">Transferred</th><th scope="col">Conferenced</th>
            </tr>
          </thead>
          <tbody>
            {r.segments.map((g) => (
              <tr key={`${g.agent_id}-${g.started_at}`}>
                <td>{named(g.agent_name, g.agent_id)}</td><td>{when(g.started_at)}</td><td>{seconds(g.talk_ms)}</td>
                <td>{seconds(g.hold_ms)}</td><td>{seconds(g.handle_ms)}</td>
                <td>{g.transferred ? 'yes' : 'no'}</td><td>{g.conferenced ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : <p>No agent took part.</p>}
      <h2>Recordings</h2>
      {recordings.length ? recordings.map((rec) => <Recording key={rec.id} recording={rec} />) : <p>No recording.</p>}
      <h2>Transcript</h2>
      {transcript?.segments?.length ? (
        <table>
          <thead><tr><th scope="col">At</th><th scope="col">Speaker</th><th scope="col">Said</th><th scope="col">Sentiment</th></tr></thead>
          <tbody>
            {transcript.segments.map((seg) => (
              <tr key={`${seg.speaker}-${seg.start}`}>
                <td>{seg.start.toFixed(1)} s</td><td>{seg.speaker}</td><td>{seg.text}</td>
                <td>{sentiment(seg.polarity)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : <p>No transcript.</p>}
    </>
  );
}

function SummaryTalk({ record, summary }) {
  const talk = summaryTalk(record, summary);
  if (!talk.withApplication) return seconds(talk.ms);
  return <>{seconds(talk.ms)} <span className="hint">with the application: no agent or other party joined the call</span></>;
}

/** TextBlob's polarity (-1..1) in words by the media pipeline's rule (app/media/sentiment.py), with the figure. */
function sentiment(polarity) {
  if (polarity == null) return '';
  const word = polarity >= 0.1 ? 'positive' : polarity <= -0.1 ? 'negative' : 'neutral';
  return `${word} (${polarity.toFixed(2)})`;
}

/**
 * A recording, streamed with HTTP Range: an <audio> cannot send the token, so the player gets a
 * media ticket's URL (POST /api/recordings/:id/tickets, good for several Range requests for a
 * few minutes). When the ticket has expired by a later seek, the player fails; one new ticket
 * is asked for then, and a second failure is said in words (the file is gone or unreadable).
 * Under the player, its waveform (GET /api/recordings/:id/peaks) seeks it; a recording whose
 * peaks cannot be read has the player alone.
 */
const UNPLAYABLE = { code: 'recording_unplayable', message: 'The recording could not be played: its file is gone or unreadable.' };

function Recording({ recording }) {
  const { call } = useAuth();
  const [src, setSrc] = useState(null);
  const [error, setError] = useState(null);
  const [renewals, setRenewals] = useState(0);
  const [peaks, setPeaks] = useState(null);
  const [audio, setAudio] = useState(null);
  useEffect(() => {
    let stopped = false;
    call(`/api/recordings/${recording.id}/tickets`, { method: 'POST' }).then(
      (ticket) => { if (!stopped) setSrc(ticket.stream_url); },
      (err) => { if (!stopped) setError(err); });
    return () => { stopped = true; };
  }, [call, recording.id, renewals]);
  useEffect(() => {
    let stopped = false;
    call(`/api/recordings/${recording.id}/peaks`).then((body) => { if (!stopped) setPeaks(body); }, () => {});
    return () => { stopped = true; };
  }, [call, recording.id]);
  const label = `Recording of ${when(recording.created_at)}`;
  return (
    <figure>
      <figcaption>{label} ({seconds(recording.duration_ms)}, {recording.format})</figcaption>
      {error ? <p role="alert">{humanMessage(error)}</p>
        : (
          <>
            <audio controls preload="metadata" src={src || undefined} aria-label={label} ref={setAudio}
              onError={() => { if (renewals < 1) setRenewals((n) => n + 1); else setError(UNPLAYABLE); }} />
            {peaks && (
              <Waveform peaks={peaks.peaks} duration={peaks.duration_seconds} audio={audio}
                label={`Seek in the ${label.toLowerCase()}`} />
            )}
          </>
        )}
    </figure>
  );
}
