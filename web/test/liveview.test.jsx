import { act, cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRouter } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { LiveView } from '../src/screens/LiveView.jsx';
import { fakeServer, jwt, loginBody } from './fake-server.js';

/** EventSource as the page uses it: named listeners, onerror, close; the test sends the events. */
class FakeEventSource {
  static opened = [];

  constructor(url) {
    this.url = url;
    this.listeners = {};
    this.closed = false;
    FakeEventSource.opened.push(this);
  }

  addEventListener(kind, fn) { this.listeners[kind] = fn; }

  close() { this.closed = true; }

  send(kind, data) { act(() => this.listeners[kind]({ data: JSON.stringify(data) })); }

  fail() { act(() => this.onerror(new Event('error'))); }
}

const sales = (waiting) => ({ queueId: 'q1', queue: 'Sales', waiting, longestWaitSeconds: 42,
  agents: { available: 1, not_ready: 0, wrap_up: 0, offline: 2 }, agentsEngaged: 1,
  serviceLevel: { targetSeconds: 20, answered: 4, withinTarget: 3, percent: 75 } });

beforeEach(() => {
  FakeEventSource.opened = [];
  globalThis.EventSource = FakeEventSource;
  localStorage.setItem('admin_auth_token', jwt({ exp: Math.floor(Date.now() / 1000) + 3600 }));
});
afterEach(() => { cleanup(); localStorage.clear(); });

describe('the live view', () => {
  test('the stream is opened with a ticket, never the token; events update the board; a drop asks for a new ticket', async () => {
    let tickets = 0;
    const server = fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'POST /api/live/tickets': () => {
        tickets += 1;
        return [201, { ticket: `t${tickets}`, expires_in_seconds: 30, stream_url: `/api/live/stream?ticket=t${tickets}` }];
      },
    });
    render(<MemoryRouter><AuthProvider><LiveView /></AuthProvider></MemoryRouter>);
    await screen.findByText('Connecting…');
    await waitFor(() => expect(FakeEventSource.opened).toHaveLength(1));
    const first = FakeEventSource.opened[0];
    expect(first.url).toBe('/api/live/stream?ticket=t1');
    expect(first.url).not.toContain(localStorage.getItem('admin_auth_token'));

    first.send('snapshot', { queues: [sales(0)], callsInProgress: 3, at: 1 });
    expect(screen.getByText('Live: figures are pushed as they change.')).toBeTruthy();
    expect(screen.getByRole('rowheader', { name: 'Sales' }).parentElement.textContent).toContain('0:42');
    first.send('queue', sales(5));
    expect(screen.getByRole('rowheader', { name: 'Sales' }).nextSibling.textContent).toBe('5');
    expect(screen.getByText('75% (3 of 4 within 20 s)')).toBeTruthy();

    first.send('call', { callId: 'c1', phase: 'answered', from: '4930111', to: '100', direction: 'inbound', at: 't1' });
    expect(screen.getByRole('cell', { name: '4930111' })).toBeTruthy();

    first.fail();
    expect(first.closed).toBe(true);
    const status = screen.getByRole('status');
    expect(status.getAttribute('aria-live')).toBe('polite');
    expect(status.textContent).toContain('Live updates paused — reconnecting…');
    expect(status.textContent).toContain('The connection to the server was lost.');
    expect(status.textContent).toMatch(/The figures below are from .* and may be out of date\./);
    await waitFor(() => expect(FakeEventSource.opened).toHaveLength(2), { timeout: 3000 }); // after 1 s
    expect(FakeEventSource.opened.map((s) => s.url)).toEqual(['/api/live/stream?ticket=t1', '/api/live/stream?ticket=t2']);
    expect(server.calls.filter((c) => c.path === '/api/live/tickets').every((c) => c.auth?.startsWith('Bearer '))).toBe(true);

    // the new stream's snapshot is the state now: the call that ended during the gap is gone
    FakeEventSource.opened[1].send('snapshot', { queues: [sales(2)], callsInProgress: 0, calls: [], at: 2 });
    expect(screen.getByRole('status').textContent).toBe('Live: figures are pushed as they change.');
    expect(screen.getByRole('rowheader', { name: 'Sales' }).nextSibling.textContent).toBe('2');
    expect(screen.queryByRole('cell', { name: '4930111' })).toBeNull();
  });

  test('the server says its bus is unavailable: paused in words, then the snapshot sent when it is back resumes', async () => {
    fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'POST /api/live/tickets': () => [201, { ticket: 't1', expires_in_seconds: 30, stream_url: '/api/live/stream?ticket=t1' }],
    });
    render(<MemoryRouter><AuthProvider><LiveView /></AuthProvider></MemoryRouter>);
    await waitFor(() => expect(FakeEventSource.opened).toHaveLength(1));
    const stream = FakeEventSource.opened[0];
    stream.send('snapshot', { queues: [sales(1)], callsInProgress: 1, at: 1 });

    stream.send('bus', { available: false });
    const status = screen.getByRole('status');
    expect(status.textContent).toContain('Live updates paused — reconnecting…');
    expect(status.textContent).toContain('The server cannot reach its event bus (RabbitMQ)');
    expect(screen.getByRole('table', { name: /Each queue now/ }).closest('.stale')).toBeTruthy();
    expect(stream.closed).toBe(false); // the stream stays: the server resumes it

    stream.send('bus', { available: true });
    stream.send('snapshot', { queues: [sales(4)], callsInProgress: 0, at: 3 });
    expect(screen.getByRole('status').textContent).toBe('Live: figures are pushed as they change.');
    expect(screen.getByRole('rowheader', { name: 'Sales' }).nextSibling.textContent).toBe('4');
    expect(screen.getByRole('table', { name: /Each queue now/ }).closest('.stale')).toBeNull();
    expect(FakeEventSource.opened).toHaveLength(1);
  });

  test('a refused ticket is said in words, and nothing is retried', async () => {
    fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'POST /api/live/tickets': () => [403, { code: 'supervisor_required', message: 'Only a supervisor or an administrator can open the live view.' }],
    });
    render(<MemoryRouter><AuthProvider><LiveView /></AuthProvider></MemoryRouter>);
    expect(await screen.findByText('Only a supervisor or an administrator can open the live view.')).toBeTruthy();
    expect(screen.getByText('The live view is not available to you.')).toBeTruthy();
    expect(FakeEventSource.opened).toEqual([]);
  });
});
