import { describe, expect, test } from 'vitest';
import { EMPTY_BOARD, applyEvent, reconnectDelayMs, resync, serviceLevelText, waitText } from '../src/live.js';
import { queueBody } from '../src/screens/Queues.jsx';

const sales = { queueId: 'q1', queue: 'Sales', waiting: 0, longestWaitSeconds: 0 };
const support = { queueId: 'q2', queue: 'Support', waiting: 2, longestWaitSeconds: 30 };

describe('the live view folds the stream\'s events into the board', () => {
  test('a snapshot replaces the queues and the count, and adds the calls already running to those the events listed', () => {
    let board = applyEvent(EMPTY_BOARD, 'call', { callId: 'c1', phase: 'started', from: '1', at: 't1' });
    board = applyEvent(board, 'call', { callId: 'c2', phase: 'started', from: '2', at: 't2' });
    board = applyEvent(board, 'snapshot', { queues: [sales], callsInProgress: 3, at: 5, calls: [
      { callId: 'c1', phase: 'answered', from: '1', at: 't0', since: 't0' },
      { callId: 'c0', phase: 'answered', from: '9', at: 't-9', since: 't-9' }] });
    expect(board.queues).toEqual([sales]);
    expect(board.callsInProgress).toBe(3);
    // c2: its call.started came before the controller registered it; only its end removes it
    expect(board.calls.map((c) => [c.callId, c.phase, c.since])).toEqual(
      [['c2', 'started', 't2'], ['c1', 'answered', 't1'], ['c0', 'answered', 't-9']]);
  });

  test('a snapshot after a gap replaces the calls whole: one that ended during the gap is gone', () => {
    let board = applyEvent(EMPTY_BOARD, 'call', { callId: 'c1', phase: 'answered', from: '1', at: 't1' });
    board = applyEvent(board, 'call', { callId: 'c9', phase: 'ended' });
    board = resync(board, { queues: [support], callsInProgress: 1, at: 9, calls: [
      { callId: 'c2', phase: 'started', from: '2', at: 't2', since: 't2' },
      { callId: 'c9', phase: 'answered', from: '9', at: 't0', since: 't0' }] });
    expect(board.calls.map((c) => c.callId)).toEqual(['c2']); // c1 ended unseen; c9 was seen ending
    expect(board.queues).toEqual([support]);
    expect(board.callsInProgress).toBe(1);
  });

  test('a snapshot read before the controller unregistered an ended call does not bring it back', () => {
    let board = applyEvent(EMPTY_BOARD, 'call', { callId: 'c1', phase: 'started', from: '1', at: 't1' });
    board = applyEvent(board, 'call', { callId: 'c1', phase: 'ended' });
    board = applyEvent(board, 'snapshot', { queues: [], callsInProgress: 1, at: 5, calls: [
      { callId: 'c1', phase: 'answered', from: '1', at: 't0', since: 't0' }] });
    expect(board.calls).toEqual([]);
  });

  test('a snapshot without a calls list (an older server) keeps the calls the events listed', () => {
    const withCall = applyEvent(EMPTY_BOARD, 'call', { callId: 'c1', phase: 'started', from: '1', at: 't1' });
    const board = applyEvent(withCall, 'snapshot', { queues: [sales], callsInProgress: 4, at: 5 });
    expect(board.calls.map((c) => c.callId)).toEqual(['c1']);
  });

  test('a queue event replaces its own row only; an unknown queue is added in name order', () => {
    const board = applyEvent(EMPTY_BOARD, 'snapshot', { queues: [support], callsInProgress: 0, at: 1 });
    const updated = applyEvent(board, 'queue', { ...support, waiting: 5 });
    expect(updated.queues.map((q) => [q.queue, q.waiting])).toEqual([['Support', 5]]);
    const added = applyEvent(updated, 'queue', sales);
    expect(added.queues.map((q) => q.queue)).toEqual(['Sales', 'Support']);
  });

  test('a call is listed from started, updated on answer (keeping when it started), gone when it ends or fails', () => {
    let board = applyEvent(EMPTY_BOARD, 'call', { callId: 'c1', phase: 'started', from: '1', at: 't1' });
    board = applyEvent(board, 'call', { callId: 'c2', phase: 'started', from: '2', at: 't2' });
    board = applyEvent(board, 'call', { callId: 'c1', phase: 'answered', from: '1', at: 't3' });
    expect(board.calls.map((c) => [c.callId, c.phase, c.since])).toEqual([['c1', 'answered', 't1'], ['c2', 'started', 't2']]);
    board = applyEvent(board, 'call', { callId: 'c1', phase: 'ended' });
    board = applyEvent(board, 'call', { callId: 'c2', phase: 'failed' });
    expect(board.calls).toEqual([]);
    expect(board.ended).toEqual(['c2', 'c1']);
  });

  test('an unknown event kind leaves the board as it was', () => {
    expect(applyEvent(EMPTY_BOARD, 'something', {})).toBe(EMPTY_BOARD);
  });

  test('figures as people read them: service level, waits, reconnection delays', () => {
    expect(serviceLevelText({ percent: 75, withinTarget: 3, answered: 4, targetSeconds: 20 })).toBe('75% (3 of 4 within 20 s)');
    expect(serviceLevelText({ percent: null })).toBe('—');
    expect([waitText(42), waitText(725), waitText(3723)]).toEqual(['0:42', '12:05', '1:02:03']);
    expect([0, 1, 2, 3, 4, 10].map(reconnectDelayMs)).toEqual([1000, 2000, 4000, 8000, 15000, 15000]);
  });
});

describe('the queue form\'s body', () => {
  test('numbers are sent as numbers, an emptied number is left out (the server keeps or defaults it)', () => {
    expect(queueBody({ name: ' Sales ', moh: 'lobby', strategy: 'ring_all', max_wait_seconds: '300',
      service_level_seconds: '', offer_timeout_seconds: '20', wrap_up_seconds: '0' }))
      .toEqual({ name: 'Sales', moh: 'lobby', strategy: 'ring_all', max_wait_seconds: 300, offer_timeout_seconds: 20, wrap_up_seconds: 0 });
  });
});
