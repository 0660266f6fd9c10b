import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRouter } from 'react-router';
import { canSee } from '../src/access.js';
import { AuthProvider } from '../src/auth.jsx';
import { Account, concurrencyText } from '../src/screens/Account.jsx';
import { Supervise } from '../src/screens/Supervise.jsx';
import { fakeServer, jwt, loginBody } from './fake-server.js';

beforeEach(() => localStorage.setItem('admin_auth_token', jwt({ exp: Math.floor(Date.now() / 1000) + 3600 })));
afterEach(() => { cleanup(); localStorage.clear(); });

const as = (role, licenses = ['queue-mgmt']) => () => {
  const body = loginBody(localStorage.getItem('admin_auth_token'));
  return [200, { ...body, user: { ...body.user, role }, account: { ...body.account, licenses } }];
};
const mount = (node) => render(<MemoryRouter><AuthProvider>{node}</AuthProvider></MemoryRouter>);

describe('who is shown supervision, campaigns and the account', () => {
  const who = (role, licenses) => ({ user: { role, permissions: [] }, account: { licenses } });
  test.each([
    ['supervise', who('supervisor', ['queue-mgmt']), true], ['supervise', who('admin', ['queue-mgmt']), true],
    ['supervise', who('agent', ['queue-mgmt']), false], ['supervise', who('supervisor', []), false],
    ['campaigns', who('admin', []), true], ['campaigns', who('supervisor', ['queue-mgmt']), false],
    ['account', who('agent', []), true],
  ])('%s for %o is %s', (screen_, identity, shown) => {
    expect(canSee(identity, screen_)).toBe(shown);
  });
});

describe('supervising a call from the live view', () => {
  test('listen, then barge switches modes, stop hangs up; each is the supervision API', async () => {
    const server = fakeServer({
      'POST /auth/refresh': as('supervisor'),
      'POST /api/calls/c1/supervise': (body) => [202, { supervision_id: 's1', call_id: 'c1', mode: body.mode, state: 'dialing' }],
      'DELETE /api/calls/c1/supervise': () => [202, { stopped: true }],
    });
    mount(<Supervise callId="c1" label="1555 to 1800" />);
    fireEvent.click(await screen.findByRole('button', { name: 'Listen' }));
    await screen.findByText('Your phone rings, then joins (listen).');
    expect(screen.getByRole('button', { name: 'Listen' }).getAttribute('aria-pressed')).toBe('true');
    fireEvent.click(screen.getByRole('button', { name: 'Barge' }));
    await screen.findByText('Your phone rings, then joins (barge).');
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Stop' })).toBeNull());
    expect(server.calls.filter((c) => c.path === '/api/calls/c1/supervise').map((c) => [c.method, c.body?.mode]))
      .toEqual([['POST', 'listen'], ['POST', 'barge'], ['DELETE', undefined]]);
  });

  test('a refusal says what to do (an unregistered phone, no agent on the call yet)', async () => {
    let code = 'supervisor_not_registered';
    fakeServer({
      'POST /auth/refresh': as('supervisor'),
      'POST /api/calls/c1/supervise': () => [409, { code, message: 'x' }],
    });
    mount(<Supervise callId="c1" label="a call" />);
    fireEvent.click(await screen.findByRole('button', { name: 'Whisper' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Your phone is not registered: sign your softphone in, then try again.');
    code = 'no_agent_leg';
    fireEvent.click(screen.getByRole('button', { name: 'Listen' }));
    await screen.findByText('No agent is talking on this call yet (IVR, queue or ringing).');
    expect(screen.queryByRole('button', { name: 'Stop' })).toBeNull();
  });
});

describe('the account page', () => {
  test('an administrator sees the licenses and limits and may lower the limit; a raise is refused beside the field', async () => {
    const server = fakeServer({
      'POST /auth/refresh': as('admin', ['api-access', 'queue-mgmt']),
      'GET /api/account': () => [200, { id: 'a1', subdomain: 'acme', name: 'Acme', licenses: ['api-access', 'queue-mgmt'],
        max_concurrent_calls: 20, mfa_required: false }],
      'PATCH /api/account': (body) => (body.max_concurrent_calls > 20
        ? [403, { code: 'limit_raise_forbidden', message: 'x' }]
        : [200, { id: 'a1', subdomain: 'acme', name: 'Acme', licenses: ['api-access', 'queue-mgmt'], max_concurrent_calls: body.max_concurrent_calls }]),
    });
    mount(<Account />);
    expect((await screen.findByTestId('concurrency')).textContent).toBe('20 calls at once');
    expect(screen.getByText('queue-mgmt')).toBeTruthy();
    const field = screen.getByLabelText('Lower the concurrent calls limit to');
    fireEvent.change(field, { target: { value: '50' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save limit' }));
    await screen.findByText(/You can only lower the limit/);
    expect(field.getAttribute('aria-invalid')).toBe('true');
    fireEvent.change(field, { target: { value: '10' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save limit' }));
    await waitFor(() => expect(screen.getByTestId('concurrency').textContent).toBe('10 calls at once'));
    expect(server.calls.filter((c) => c.method === 'PATCH').map((c) => c.body)).toEqual([
      { max_concurrent_calls: 50 }, { max_concurrent_calls: 10 }]);
  });

  test('anyone else sees the licenses of their sign-in, read-only, and never asks for /api/account', async () => {
    const server = fakeServer({ 'POST /auth/refresh': as('supervisor', ['queue-mgmt']) });
    mount(<Account />);
    await screen.findByText(/Only an administrator signed in to the console/);
    expect(screen.getByText('queue-mgmt')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Save limit' })).toBeNull();
    expect(server.calls.some((c) => c.path === '/api/account')).toBe(false);
  });

  test('0 is unlimited', () => {
    expect(concurrencyText(0)).toBe('Unlimited');
  });
});
