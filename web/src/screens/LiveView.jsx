import { useEffect, useRef, useState } from 'react';
import { canSee } from '../access.js';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { EMPTY_BOARD, applyEvent, reconnectDelayMs, resync, serviceLevelText, waitText } from '../live.js';
import { Supervise } from './Supervise.jsx';

const EVENT_KINDS = ['snapshot', 'queue', 'call'];
const when = (ms) => new Date(ms).toLocaleTimeString();

/**
 * The live view: pushed by the server (server-sent events fed by the bus), never polled.
 * An EventSource cannot send the Bearer token, so each connection first asks for a single-use
 * ticket (POST /api/live/tickets) and opens /api/live/stream?ticket=… with it. When the stream
 * drops, the EventSource is closed (its own retry would reuse the spent ticket) and a new
 * ticket is asked for after 1 s, 2 s, 4 s … (at most 15 s). While the stream is down, or the
 * server says its bus is (`bus` {available: false}), the page says "Live updates paused" and
 * greys the figures, as of their time; the next snapshot (the new stream's first, or the one
 * the server sends when the bus is back) replaces the board whole (`resync`).
 */
export function LiveView() {
  const { call, identity } = useAuth();
  const supervises = canSee(identity, 'supervise');
  const [board, setBoard] = useState(EMPTY_BOARD);
  const [status, setStatus] = useState('connecting');
  const [error, setError] = useState(null);
  const [pausedBy, setPausedBy] = useState(null); // 'stream' | 'bus' while the figures may be stale
  const [updatedAt, setUpdatedAt] = useState(null);
  const attempt = useRef(0);
  const gap = useRef(true); // the next snapshot follows a gap: it replaces the board whole
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let source = null;
    let timer = null;
    let stopped = false;
    gap.current = true;
    const retry = () => {
      if (stopped) return;
      setStatus('paused');
      setPausedBy((p) => p || 'stream');
      timer = setTimeout(() => setGeneration((g) => g + 1), reconnectDelayMs(attempt.current));
      attempt.current += 1;
    };
    call('/api/live/tickets', { method: 'POST' }).then((ticket) => {
      if (stopped) return;
      setError(null);
      source = new EventSource(ticket.stream_url);
      for (const kind of EVENT_KINDS) {
        source.addEventListener(kind, (event) => {
          const data = JSON.parse(event.data);
          if (kind === 'snapshot') {
            attempt.current = 0;
            setStatus('live');
            setPausedBy(null);
            const whole = gap.current;
            gap.current = false;
            setBoard((b) => (whole ? resync(b, data) : applyEvent(b, kind, data)));
          } else {
            setBoard((b) => applyEvent(b, kind, data));
          }
          setUpdatedAt(Date.now());
        });
      }
      source.addEventListener('bus', (event) => {
        if (JSON.parse(event.data).available) return; // the snapshot that follows resumes
        gap.current = true;
        setStatus('paused');
        setPausedBy('bus');
      });
      source.onerror = () => {
        source.close();
        retry();
      };
    }, (err) => {
      if (stopped) return;
      if (err.isOutage) {
        setError(err);
        retry();
      } else {
        setError(err);
        setStatus('refused');
      }
    });
    return () => {
      stopped = true;
      clearTimeout(timer);
      if (source) source.close();
    };
  }, [call, generation]);

  return (
    <>
      <h1>Live view</h1>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => { attempt.current = 0; setGeneration((g) => g + 1); }} />
      {error && !error.isOutage && <p className="form-error" role="alert">{error.message}</p>}
      <div className={status === 'paused' ? 'live-status banner paused' : 'live-status'} role="status" aria-live="polite" id="live-status">
        <p>{STATUS_TEXT[status]}</p>
        {status === 'paused' && (
          <p className="why">
            {PAUSE_REASON[pausedBy] || PAUSE_REASON.stream}{' '}
            {updatedAt ? `The figures below are from ${when(updatedAt)} and may be out of date.` : 'No figures yet.'}
          </p>
        )}
      </div>
      <div className={status === 'paused' ? 'stale' : undefined} aria-describedby={status === 'paused' ? 'live-status' : undefined}>
      <section aria-labelledby="live-queues">
        <h2 id="live-queues">Queues</h2>
        <table className="board">
          <caption className="visually-hidden">Each queue now: callers waiting, agents by state, service level</caption>
          <thead>
            <tr>
              <th scope="col">Queue</th><th scope="col">Waiting</th><th scope="col">Longest wait</th>
              <th scope="col">Available</th><th scope="col">On a call</th><th scope="col">Wrap-up</th>
              <th scope="col">Not ready</th><th scope="col">Offline</th><th scope="col">Service level</th>
            </tr>
          </thead>
          <tbody>
            {board.queues.map((q) => (
              <tr key={q.queueId} data-queue={q.queue}>
                <th scope="row">{q.queue}</th>
                <td className="figure">{q.waiting}</td>
                <td className="figure">{waitText(q.longestWaitSeconds)}</td>
                <td className="figure">{q.agents?.available ?? 0}</td>
                <td className="figure">{q.agentsEngaged ?? 0}</td>
                <td className="figure">{q.agents?.wrap_up ?? 0}</td>
                <td className="figure">{q.agents?.not_ready ?? 0}</td>
                <td className="figure">{q.agents?.offline ?? 0}</td>
                <td>{serviceLevelText(q.serviceLevel)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {status === 'live' && board.queues.length === 0 && <p>No queues yet.</p>}
      </section>
      <section aria-labelledby="live-calls">
        <h2 id="live-calls">Calls in progress: <span className="figure">{board.callsInProgress}</span></h2>
        <table>
          <caption className="visually-hidden">Calls in progress</caption>
          <thead>
            <tr>
              <th scope="col">From</th><th scope="col">To</th><th scope="col">Direction</th><th scope="col">State</th><th scope="col">Since</th>
              {supervises && <th scope="col">Supervise</th>}
            </tr>
          </thead>
          <tbody>
            {board.calls.map((c) => (
              <tr key={c.callId}>
                <td>{c.from}</td><td>{c.to}</td><td>{c.direction}</td><td>{c.phase}</td>
                <td>{c.since ? new Date(c.since).toLocaleTimeString() : ''}</td>
                {supervises && <td>{c.phase === 'answered' ? <Supervise callId={c.callId} label={`${c.from} to ${c.to}`} /> : ''}</td>}
              </tr>
            ))}
          </tbody>
        </table>
        <p className="hint">The newest 200 calls are listed; the count is every call of the account.</p>
      </section>
      </div>
    </>
  );
}

const STATUS_TEXT = {
  connecting: 'Connecting…',
  live: 'Live: figures are pushed as they change.',
  paused: 'Live updates paused — reconnecting…',
  refused: 'The live view is not available to you.',
};

const PAUSE_REASON = {
  stream: 'The connection to the server was lost.',
  bus: 'The server cannot reach its event bus (RabbitMQ), so nothing new arrives.',
};
