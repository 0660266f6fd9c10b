import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { StrictMode } from 'react';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { Login } from '../src/screens/Login.jsx';
import { SsoCallback } from '../src/screens/SsoCallback.jsx';
import { fakeServer, jwt, loginBody } from './fake-server.js';

function Where() {
  const location = useLocation();
  return <p>at {location.pathname}</p>;
}

function renderAt(entry) {
  return render(
    <StrictMode>
      <MemoryRouter initialEntries={[entry]}>
        <AuthProvider>
          <Routes>
            <Route path="/login" element={<Login />} />
            <Route path="/login/sso" element={<SsoCallback />} />
            <Route path="*" element={<Where />} />
          </Routes>
        </AuthProvider>
      </MemoryRouter>
    </StrictMode>,
  );
}

const token = () => jwt({ exp: Math.floor(Date.now() / 1000) + 3600 });

beforeEach(() => { localStorage.clear(); sessionStorage.clear(); });
afterEach(cleanup);

describe('single sign-on', () => {
  test('given GET /auth/sso enabled, when the login page opens, then it offers "Sign in with <display name>"', async () => {
    fakeServer({ 'GET /auth/sso': () => [200, { enabled: true, display_name: 'Acme SSO', start_url: '/auth/sso/start' }] });
    renderAt('/login');
    expect(await screen.findByRole('button', { name: 'Sign in with Acme SSO' })).toBeTruthy();
  });

  test('given single sign-on disabled, when the login page opens, then there is no such button', async () => {
    const server = fakeServer({ 'GET /auth/sso': () => [200, { enabled: false, display_name: null, start_url: null }] });
    renderAt('/login');
    await screen.findByRole('button', { name: 'Sign in' });
    await new Promise((resolve) => { setTimeout(resolve, 0); });
    // (strict mode runs the effect twice in development: the same GET, answered alike)
    expect([...new Set(server.calls.map((c) => `${c.method} ${c.path}`))]).toEqual(['GET /auth/sso']);
    expect(screen.queryByRole('button', { name: /Sign in with/ })).toBeNull();
  });

  test('given the provider\'s code and state, when the callback page opens (strict mode), then they are posted once and the user lands on the page kept before leaving', async () => {
    const issued = token();
    const server = fakeServer({ 'POST /auth/sso/callback': () => [200, loginBody(issued)] });
    sessionStorage.setItem('console:sso-next', '/calls');
    renderAt('/login/sso?code=c-1&state=s-1&iss=https%3A%2F%2Fidp');
    expect(await screen.findByText('at /calls')).toBeTruthy();
    expect(server.calls.map((c) => [c.method, c.path, c.body])).toEqual([['POST', '/auth/sso/callback', { code: 'c-1', state: 's-1' }]]);
    expect(localStorage.getItem('admin_auth_token')).toBe(issued);
    expect(sessionStorage.getItem('console:sso-next')).toBeNull();
  });

  test('given the provider answered an error, when the callback page opens, then it says so and posts nothing', async () => {
    const server = fakeServer({});
    renderAt('/login/sso?error=access_denied');
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'The identity provider did not sign you in.');
    expect(server.calls).toEqual([]);
  });

  test('given a used state, when the callback is refused, then the server\'s code is said in words with the way back', async () => {
    fakeServer({ 'POST /auth/sso/callback': () => [400, { code: 'sso_state_invalid', message: 'x' }] });
    renderAt('/login/sso?code=c&state=s');
    expect((await screen.findByRole('alert')).textContent).toBe('This sign-in took too long or was already used. Sign in again.');
    expect(screen.getByRole('link', { name: 'Back to sign in' })).toBeTruthy();
  });
});

describe('second-factor enrolment at sign-in', () => {
  test('given 403 mfa_enrolment_required, when the user sets up the app, then both calls carry the enrolment token, the recovery codes show, and the confirmation\'s login opens the page', async () => {
    const issued = token();
    const codes = Array.from({ length: 10 }, (_, i) => `AAAA-BBBB-CCCC-000${i}`);
    const server = fakeServer({
      'POST /auth/login': () => [403, { code: 'mfa_enrolment_required', message: 'x', details: { enrolment_token: 'enr-1', expires_in: 900 } }],
      'POST /auth/mfa/totp': () => [200, { secret: 'JBSWY3DPEHPK3PXP', otpauth_uri: 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP', qr_svg: 'data:image/svg+xml;base64,PHN2Zy8+', digits: 6, period: 30 }],
      'POST /auth/mfa/totp/confirm': (body) => (body.code === '123456'
        ? [200, { recovery_codes: codes, enrolled_at: '2026-01-01T00:00:00Z', login: loginBody(issued) }]
        : [422, { code: 'invalid_confirmation_code', message: 'x' }]),
    });
    renderAt('/login?next=%2Fnumbers');
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'new' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'pw' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Start' }));
    expect(await screen.findByText('JBSWY3DPEHPK3PXP')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Authentication code'), { target: { value: '000000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText(/That code is not right/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Authentication code'), { target: { value: '123456' } });
    fireEvent.click(screen.getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('AAAA-BBBB-CCCC-0009')).toBeTruthy();
    expect(localStorage.getItem('admin_auth_token')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'I have saved my recovery codes' }));
    expect(await screen.findByText('at /numbers')).toBeTruthy();
    expect(localStorage.getItem('admin_auth_token')).toBe(issued);
    const enrolment = server.calls.filter((c) => c.path.startsWith('/auth/mfa/'));
    expect(enrolment.map((c) => [c.path, c.body.enrolment_token, c.auth])).toEqual([
      ['/auth/mfa/totp', 'enr-1', undefined], ['/auth/mfa/totp/confirm', 'enr-1', undefined], ['/auth/mfa/totp/confirm', 'enr-1', undefined]]);
  });
});
