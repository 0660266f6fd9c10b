import { useEffect, useRef, useState } from 'react';
import { reconnectDelayMs } from '../live.js';

/**
 * A carrier page's gateways kept live by the server's push (docs/api.md "Live view", the
 * `gateway` event): health (OPTIONS ping up/down) and registration state (REGED, FAIL_WAIT, …)
 * of the account's own gateways, as the bus reports each change.
 *
 * The stream is the live view's: a single-use ticket (POST /api/live/tickets), then an
 * EventSource. The ticket needs the `queue-mgmt` license and an administrator or supervisor;
 * without it (or while the stream is down) the page falls back to reading the gateways every
 * HEALTH_REFRESH_MS, as before.
 */

/** The gateway list after one `gateway` event (a gateway not listed is left alone). */
export function applyGatewayEvent(items, data) {
  if (!Array.isArray(items)) return items;
  return items.map((g) => {
    if (g.id !== data.gatewayId) return g;
    const next = { ...g };
    if (data.health) next.health = data.health;
    if (data.registration) {
      next.registration = { ...g.registration, state: data.registration.state,
        sipStatus: data.registration.sipStatus, phrase: data.registration.phrase, changedAt: data.at };
    }
    return next;
  });
}

/**
 * Opens the push stream and calls onGateway(data) for each `gateway` event, onOpen() when the
 * stream is open (the page reads the list once more: a change between its read and the stream's
 * opening is not replayed). Returns 'connecting' | 'live' | 'polling'.
 */
export function useGatewayPush(call, onGateway, onOpen) {
  const [status, setStatus] = useState('connecting');
  const [generation, setGeneration] = useState(0);
  const attempt = useRef(0);
  const handlers = useRef({ onGateway, onOpen });
  handlers.current = { onGateway, onOpen };
  useEffect(() => {
    let source = null;
    let timer = null;
    let stopped = false;
    call('/api/live/tickets', { method: 'POST' }).then((ticket) => {
      if (stopped) return;
      source = new EventSource(ticket.stream_url);
      source.addEventListener('snapshot', () => {
        handlers.current.onOpen?.();
        attempt.current = 0;
        setStatus('live');
      }, { once: true });
      source.addEventListener('gateway', (event) => handlers.current.onGateway(JSON.parse(event.data)));
      source.onerror = () => {
        source.close();
        if (stopped) return;
        setStatus('polling');
        timer = setTimeout(() => setGeneration((g) => g + 1), reconnectDelayMs(attempt.current));
        attempt.current += 1;
      };
    }, (err) => {
      if (stopped) return;
      setStatus('polling');
      if (err?.isOutage) {
        timer = setTimeout(() => setGeneration((g) => g + 1), reconnectDelayMs(attempt.current));
        attempt.current += 1;
      }
    });
    return () => {
      stopped = true;
      clearTimeout(timer);
      if (source) source.close();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [call, generation]);
  return status;
}
