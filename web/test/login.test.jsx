import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { Login } from '../src/screens/Login.jsx';
import { fakeServer, jwt, loginBody } from './fake-server.js';

function Where() {
  const location = useLocation();
  return <p>at {location.pathname}</p>;
}

function renderLogin(entry = '/login?next=%2Fnumbers%2F7') {
  return render(
    <MemoryRouter initialEntries={[entry]}>
      <AuthProvider>
        <Routes>
          <Route path="/login" element={<Login />} />
          <Route path="*" element={<Where />} />
        </Routes>
      </AuthProvider>
    </MemoryRouter>,
  );
}

beforeEach(() => localStorage.clear());
afterEach(() => { cleanup(); vi.useRealTimers(); });

describe('sign-in', () => {
  test('a second factor: the password gets 401 mfa_required, the code step posts the challenge, then back to the page', async () => {
    const token = jwt({ exp: Math.floor(Date.now() / 1000) + 3600 });
    const server = fakeServer({
      'POST /auth/login': () => [401, { code: 'mfa_required', message: 'x',
        details: { challenge_token: 'chal-1', expires_in: 300, methods: ['totp', 'recovery_code'] } }],
      'POST /auth/login/mfa': (body) => (body.code === '123456'
        ? [200, loginBody(token)] : [401, { code: 'invalid_mfa_code', message: 'x' }]),
    });
    renderLogin();
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'admin' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'pw' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    const code = await screen.findByLabelText('Authentication code');
    fireEvent.change(code, { target: { value: '000000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByText(/That code is not right/)).toBeTruthy();
    expect(screen.getByLabelText('Authentication code').getAttribute('aria-invalid')).toBe('true');
    fireEvent.change(screen.getByLabelText('Authentication code'), { target: { value: ' 123456 ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByText('at /numbers/7')).toBeTruthy();
    expect(localStorage.getItem('admin_auth_token')).toBe(token);
    const posts = server.calls.filter((c) => c.method === 'POST'); // the page also asks GET /auth/sso
    expect(posts.map((c) => c.path)).toEqual(['/auth/login', '/auth/login/mfa', '/auth/login/mfa']);
    expect(posts[2].body).toEqual({ challenge_token: 'chal-1', code: '123456' });
  });

  test('the session is refreshed five minutes before the token expires, and the new token stored', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const now = Math.floor(Date.now() / 1000);
    const first = jwt({ iat: now - 1200, exp: now + 600 }); // 30 min life: refreshed 5 min before its end
    const second = jwt({ iat: now + 300, exp: now + 2100 });
    localStorage.setItem('admin_auth_token', first);
    let refreshes = 0;
    const server = fakeServer({
      'POST /auth/refresh': () => { refreshes += 1; return [200, loginBody(refreshes === 1 ? first : second)]; },
    });
    renderLogin('/login');
    await vi.waitFor(() => expect(refreshes).toBe(1)); // the start-up check of the stored token
    await act(async () => { vi.advanceTimersByTime(4 * 60_000); });
    expect(refreshes).toBe(1);
    await act(async () => { vi.advanceTimersByTime(61_000); });
    await vi.waitFor(() => expect(refreshes).toBe(2));
    expect(server.calls[1].auth).toBe(`Bearer ${first}`);
    await vi.waitFor(() => expect(localStorage.getItem('admin_auth_token')).toBe(second));
  });
});
