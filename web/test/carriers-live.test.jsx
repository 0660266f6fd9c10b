import { act, cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRouter, Route, Routes } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { CarriersRoutes } from '../src/routing/Carriers.jsx';
import { applyGatewayEvent } from '../src/routing/gatewayLive.js';
import { fakeServer, jwt, loginBody } from './fake-server.js';

class FakeEventSource {
  static opened = [];

  constructor(url) { this.url = url; this.listeners = {}; this.closed = false; FakeEventSource.opened.push(this); }

  addEventListener(kind, fn) { this.listeners[kind] = fn; }

  close() { this.closed = true; }

  send(kind, data) { act(() => this.listeners[kind]({ data: JSON.stringify(data) })); }
}

const GATEWAY = { id: 'g1', carrier_id: 'c1', ipv4: '203.0.113.10', network: '203.0.113.10/32', netmask: 32, port: 5060,
  transport: 'udp', inbound: true, outbound: true, is_active: true, health: 'up', register: true,
  register_username: 'acme', registration: { state: 'REGED' } };
const OTHER = { ...GATEWAY, id: 'g2', ipv4: '203.0.113.11', network: '203.0.113.11/32', register: false, register_username: null };

beforeEach(() => {
  FakeEventSource.opened = [];
  globalThis.EventSource = FakeEventSource;
  localStorage.setItem('admin_auth_token', jwt({ exp: Math.floor(Date.now() / 1000) + 3600 }));
});
afterEach(() => { cleanup(); localStorage.clear(); });

function routes(ticket) {
  return {
    'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
    'GET /api/carriers/c1': () => [200, { id: 'c1', name: 'Acme Telecom', platform: false, is_active: true,
      e164_leading_plus: false, tech_prefix: '', description: null }],
    'GET /api/carriers/c1/gateways': () => [200, [GATEWAY, OTHER]],
    'POST /api/live/tickets': ticket,
  };
}

function page() {
  return render(
    <MemoryRouter initialEntries={['/carriers/c1']}>
      <AuthProvider><Routes><Route path="/carriers/*" element={<CarriersRoutes />} /></Routes></AuthProvider>
    </MemoryRouter>,
  );
}

describe('gateway health on the carrier page', () => {
  test('an event changes only its gateway: health, then registration', () => {
    const items = [GATEWAY, OTHER];
    const down = applyGatewayEvent(items, { gatewayId: 'g1', health: 'down', at: 't' });
    expect(down.map((g) => g.health)).toEqual(['down', 'up']);
    expect(down[1]).toBe(OTHER);
    const failing = applyGatewayEvent(down, { gatewayId: 'g1', registration: { state: 'FAIL_WAIT', sipStatus: '403' }, at: 't2' });
    expect([failing[0].health, failing[0].registration.state, failing[0].registration.sipStatus]).toEqual(['down', 'FAIL_WAIT', '403']);
    expect(applyGatewayEvent(items, { gatewayId: 'nope', health: 'down' })).toEqual(items);
  });

  test('pushed events update the table without a reload; the stream is opened with a ticket', async () => {
    const server = fakeServer(routes(() => [201, { ticket: 't1', expires_in_seconds: 30, stream_url: '/api/live/stream?ticket=t1' }]));
    page();
    const row = await screen.findByRole('row', { name: /203\.0\.113\.10\/32/u });
    expect(row.textContent).toContain('Up');
    expect(row.textContent).toContain('acme: REGED');
    await waitFor(() => expect(FakeEventSource.opened).toHaveLength(1));
    const stream = FakeEventSource.opened[0];
    expect(stream.url).toBe('/api/live/stream?ticket=t1');
    stream.send('snapshot', { queues: [], callsInProgress: 0, calls: [] });
    await screen.findByText(/changes are pushed as the switch reports them/u);
    const reads = server.calls.filter((c) => c.path === '/api/carriers/c1/gateways').length;

    stream.send('gateway', { gatewayId: 'g1', carrierId: 'c1', health: 'down', sipStatus: '408', at: 'x' });
    stream.send('gateway', { gatewayId: 'g1', carrierId: 'c1', registration: { state: 'FAIL_WAIT', previous: 'REGED' }, at: 'y' });
    const after = screen.getByRole('row', { name: /203\.0\.113\.10\/32/u });
    expect(after.textContent).toContain('Down: routing skips it');
    expect(after.textContent).toContain('acme: FAIL_WAIT');
    expect(screen.getByRole('row', { name: /203\.0\.113\.11\/32/u }).textContent).toContain('Up');
    expect(server.calls.filter((c) => c.path === '/api/carriers/c1/gateways').length).toBe(reads); // no re-read
  });

  test('without a ticket (no queue-mgmt license) the page says it re-reads the gateways', async () => {
    fakeServer(routes(() => [403, { code: 'license_required', message: 'The queue-mgmt license is required.' }]));
    page();
    await screen.findByText(/re-read every 15 s/u);
    expect(FakeEventSource.opened).toHaveLength(0);
  });
});
