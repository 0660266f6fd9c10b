import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { MemoryRouter, Route, Routes } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { Layout, RequireScreen } from '../src/components/Layout.jsx';
import { Callbacks } from '../src/screens/Callbacks.jsx';
import { callbackActions, rescheduleBody, toLocalInput } from '../src/screens/callbacks.js';
import { fakeServer, jwt, loginBody } from './fake-server.js';

beforeEach(() => {
  localStorage.setItem('admin_auth_token', jwt({ exp: Math.floor(Date.now() / 1000) + 3600 }));
  window.confirm = vi.fn(() => true);
});
afterEach(() => { cleanup(); localStorage.clear(); });

const refresh = () => [200, loginBody(localStorage.getItem('admin_auth_token'))];
const QUEUES = { items: [{ id: 'q1', name: 'Sales' }, { id: 'q2', name: 'Support' }], next_cursor: null };
const cb = (over) => ({ id: 'c1', queue_id: 'q1', phone_number: '4930111', priority: 0,
  requested_at: '2026-11-26T10:00:00+00:00', scheduled_at: null, status: 'pending', attempts: 0,
  max_attempts: 3, last_attempt_at: null, notes: 'wants Anna', ...over });

function renderAt(entry) {
  return render(
    <MemoryRouter initialEntries={[entry]}>
      <AuthProvider><Routes><Route path="/callbacks" element={<Callbacks />} /></Routes></AuthProvider>
    </MemoryRouter>,
  );
}

describe('callback rules', () => {
  test('only a pending callback offers cancel and reschedule', () => {
    expect(callbackActions(cb())).toEqual(['cancel', 'reschedule']);
    for (const status of ['dialing', 'completed', 'failed', 'cancelled']) expect(callbackActions(cb({ status }))).toEqual([]);
  });

  test('the reschedule body: an empty time is null, a time is a UTC instant, the priority only when changed', () => {
    expect(rescheduleBody({ scheduled_at: '', priority: '0' }, cb())).toEqual({ scheduled_at: null });
    const local = '2030-01-02T10:00';
    expect(rescheduleBody({ scheduled_at: local, priority: '5' }, cb())).toEqual(
      { scheduled_at: new Date(local).toISOString(), priority: 5 });
    expect(rescheduleBody({ scheduled_at: '', priority: 'high' }, cb()).priority).toBe('high');
    expect(toLocalInput(new Date(local).toISOString())).toBe(local);
    expect(toLocalInput(null)).toBe('');
  });
});

describe('the Callbacks screen', () => {
  test('the first queue by default, its callbacks with the status filter in the request, then another queue', async () => {
    const server = fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/queues': () => [200, QUEUES],
      'GET /api/queues/q1/callbacks': () => [200, { items: [cb()], next_cursor: null }],
      'GET /api/queues/q2/callbacks': () => [200, { items: [], next_cursor: null }],
    });
    renderAt('/callbacks?status=pending');
    expect(await screen.findByText('4930111')).toBeTruthy();
    expect(screen.getByText('As soon as an agent is free')).toBeTruthy();
    expect(screen.getByText('0 of 3')).toBeTruthy();
    const listed = server.calls.find((c) => c.path.startsWith('/api/queues/q1/callbacks?'));
    const query = new URLSearchParams(listed.path.split('?')[1]);
    expect(query.get('status')).toBe('pending');
    expect(query.get('envelope')).toBe('true');
    fireEvent.change(screen.getByLabelText('Queue'), { target: { value: 'q2' } });
    expect(await screen.findByText('No callbacks match.')).toBeTruthy();
    expect(screen.getByLabelText('Status').value).toBe('pending');
  });

  test('cancel: the row turns cancelled and loses its actions; a 409 is said in words on the row, which is read again', async () => {
    let deletes = 0;
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/queues': () => [200, QUEUES],
      'GET /api/queues/q1/callbacks': () => [200, { items: [cb(), cb({ id: 'c2', phone_number: '4930222' })], next_cursor: null }],
      'DELETE /api/queues/q1/callbacks/c1': () => { deletes += 1; return [204, null]; },
      'DELETE /api/queues/q1/callbacks/c2': () => [409, { code: 'callback_in_progress', message: 'being dialled' }],
      'GET /api/queues/q1/callbacks/c2': () => [200, cb({ id: 'c2', phone_number: '4930222', status: 'dialing', attempts: 1 })],
    });
    renderAt('/callbacks');
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel 4930111' }));
    expect(await screen.findByText('The callback to 4930111 is cancelled.')).toBeTruthy();
    expect(deletes).toBe(1);
    expect(screen.queryByRole('button', { name: 'Cancel 4930111' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel 4930222' }));
    expect(await screen.findByText(/being dialled now, so this callback cannot be changed/)).toBeTruthy();
    // the row is read again: the dialling callback offers nothing any more, the message stays
    expect(await screen.findByRole('cell', { name: 'dialing' })).toBeTruthy();
    expect(screen.getByText('1 of 3')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Cancel 4930222' })).toBeNull();
    expect(screen.getByText(/being dialled now, so this callback cannot be changed/)).toBeTruthy();
  });

  test('reschedule: a refused priority beside its field with the typed values kept, then saved', async () => {
    const bodies = [];
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/queues': () => [200, QUEUES],
      'GET /api/queues/q1/callbacks': () => [200, { items: [cb()], next_cursor: null }],
      'PATCH /api/queues/q1/callbacks/c1': (body) => {
        bodies.push(body);
        if (body.priority === 5000) {
          return [422, { code: 'validation_failed', message: 'bad', details: { json: { priority: ['Must be greater than or equal to -1000 and less than or equal to 1000.'] } } }];
        }
        return [200, cb({ ...body })];
      },
    });
    renderAt('/callbacks');
    fireEvent.click(await screen.findByRole('button', { name: 'Reschedule 4930111' }));
    const form = screen.getByRole('form', { name: 'Reschedule the callback to 4930111' });
    fireEvent.change(within(form).getByLabelText('Not before'), { target: { value: '2030-01-02T10:00' } });
    fireEvent.change(within(form).getByLabelText('Priority'), { target: { value: '5000' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save new time' }));
    expect(await within(form).findByText(/less than or equal to 1000/)).toBeTruthy();
    expect(within(form).getByLabelText('Priority').getAttribute('aria-invalid')).toBe('true');
    expect(within(form).getByLabelText('Not before').value).toBe('2030-01-02T10:00');
    fireEvent.change(within(form).getByLabelText('Priority'), { target: { value: '5' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save new time' }));
    expect(await screen.findByText('The callback to 4930111 is rescheduled.')).toBeTruthy();
    expect(bodies[1]).toEqual({ scheduled_at: new Date('2030-01-02T10:00').toISOString(), priority: 5 });
    await waitFor(() => expect(screen.queryByText('As soon as an agent is free')).toBeNull());
    expect(screen.getByText(new Date('2030-01-02T10:00').toLocaleString())).toBeTruthy();
  });
});

describe('a supervisor', () => {
  const supervisorRefresh = () => {
    const body = loginBody(localStorage.getItem('admin_auth_token'));
    return [200, { ...body, user: { ...body.user, username: 'sue', role: 'supervisor' },
      account: { ...body.account, licenses: ['queue-mgmt'] } }];
  };

  test('sees Callbacks in the navigation, opens the screen and cancels a pending callback', async () => {
    let deletes = 0;
    fakeServer({
      'POST /auth/refresh': supervisorRefresh,
      'GET /api/queues': () => [200, QUEUES],
      'GET /api/queues/q1/callbacks': () => [200, { items: [cb()], next_cursor: null }],
      'DELETE /api/queues/q1/callbacks/c1': () => { deletes += 1; return [204, null]; },
    });
    render(
      <MemoryRouter initialEntries={['/callbacks']}>
        <AuthProvider>
          <Routes>
            <Route element={<Layout />}>
              <Route path="/callbacks" element={<RequireScreen screen="callbacks"><Callbacks /></RequireScreen>} />
            </Route>
          </Routes>
        </AuthProvider>
      </MemoryRouter>,
    );
    const nav = await screen.findByRole('navigation', { name: 'Screens' });
    await waitFor(() => expect(within(nav).getByRole('link', { name: 'Callbacks' })).toBeTruthy());
    expect(within(nav).queryByRole('link', { name: 'Queues' })).toBeNull(); // queue settings stay an admin's
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel 4930111' }));
    expect(await screen.findByText('The callback to 4930111 is cancelled.')).toBeTruthy();
    expect(deletes).toBe(1);
  });
});
