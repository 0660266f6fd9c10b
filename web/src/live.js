/**
 * The live view's state from the stream's events (docs/api.md "Live view"): pure functions, so
 * the rules are unit-tested without a server.
 *
 * - `snapshot`: the board read by the server; replaces the queues and the count of calls in
 *   progress, and adds the calls it lists (the server's live-call registry: a page opened
 *   mid-call lists the calls already running) to those the call events listed. Only a call's
 *   `ended`/`failed` event removes it, and a snapshot never brings back a call the page saw
 *   end: a snapshot read just before the controller registered (or unregistered) a call must
 *   not drop (or revive) it. A call keeps its first `since`.
 * - `queue`: one queue's `queue.metrics`; replaces that queue's row (a queue not on the board
 *   yet, created since the page opened, is added).
 * - `call`: started/answered add or update a call; ended/failed remove it.
 */

export const EMPTY_BOARD = { queues: [], callsInProgress: 0, calls: [], ended: [], at: null };
// how many ended calls the page remembers (a snapshot read just before the controller
// unregistered a call must not bring it back)
const ENDED_REMEMBERED = 500;

export function applyEvent(board, kind, data) {
  if (kind === 'snapshot') {
    const listed = new Map(board.calls.map((c) => [c.callId, c]));
    for (const c of data.calls ?? []) {
      if (board.ended.includes(c.callId)) continue;
      const before = listed.get(c.callId);
      listed.set(c.callId, { ...before, ...c, since: before?.since ?? c.since ?? c.at });
    }
    const calls = [...listed.values()];
    return { ...board, queues: data.queues, callsInProgress: data.callsInProgress, calls, at: data.at };
  }
  if (kind === 'queue') {
    const known = board.queues.some((q) => q.queueId === data.queueId);
    const queues = known ? board.queues.map((q) => (q.queueId === data.queueId ? data : q))
      : [...board.queues, data].sort((a, b) => a.queue.localeCompare(b.queue));
    return { ...board, queues };
  }
  if (kind === 'call') {
    const others = board.calls.filter((c) => c.callId !== data.callId);
    if (data.phase === 'ended' || data.phase === 'failed') {
      return { ...board, calls: others, ended: [data.callId, ...board.ended].slice(0, ENDED_REMEMBERED) };
    }
    const before = board.calls.find((c) => c.callId === data.callId);
    const call = { ...before, ...data, since: before?.since ?? data.at };
    return { ...board, calls: [call, ...others] };
  }
  return board;
}

/**
 * A snapshot after a gap in the stream (a new stream after a drop, or the bus back after an
 * outage): the events of the gap are lost, so the calls are the snapshot's alone; a call that
 * ended meanwhile must not stay listed. The calls seen ending are still remembered.
 */
export function resync(board, data) {
  return applyEvent({ ...board, calls: [] }, 'snapshot', data);
}

/** "75% of 4 within 20 s", or a dash when nobody was answered in the window. */
export function serviceLevelText(level) {
  if (!level || level.percent === null || level.percent === undefined) return '—';
  return `${level.percent}% (${level.withinTarget} of ${level.answered} within ${level.targetSeconds} s)`;
}

/** 0:42, 12:05, 1:02:03 */
export function waitText(seconds) {
  const s = Math.max(0, Math.floor(seconds || 0));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

/** Reconnection delays: 1 s, 2 s, 4 s … at most 15 s. */
export function reconnectDelayMs(attempt) {
  return Math.min(15000, 1000 * 2 ** Math.max(0, attempt));
}
