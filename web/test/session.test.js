import { describe, expect, test } from 'vitest';
import { MIN_REFRESH_DELAY_MS, REFRESH_MARGIN_MS, TOKEN_KEY, delayUntil, refreshAt, safeNext, storeToken, storedToken, tenantFromHost } from '../src/session.js';

const jwt = (payload) => `eyJhbGciOiJIUzI1NiJ9.${btoa(JSON.stringify(payload)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}.sig`;

describe('session rules', () => {
  test('the tenant is the first label of the host name', () => {
    expect(tenantFromHost('acme.sbc.example.com')).toBe('acme');
    expect(tenantFromHost('Acme.localhost')).toBe('acme');
    expect(tenantFromHost('acme.localhost.')).toBe('acme');
    expect(tenantFromHost('localhost')).toBeNull();
    expect(tenantFromHost('127.0.0.1')).toBeNull();
  });

  test('the token lives in localStorage under admin_auth_token and is removed on sign-out', () => {
    expect(TOKEN_KEY).toBe('admin_auth_token');
    storeToken('abc');
    expect(localStorage.getItem('admin_auth_token')).toBe('abc');
    expect(storedToken()).toBe('abc');
    storeToken(null);
    expect(localStorage.getItem('admin_auth_token')).toBeNull();
  });

  test('the refresh is due five minutes before expiry, halfway for a short token, never at once', () => {
    const iat = 1_800_000_000;
    expect(refreshAt(jwt({ iat, exp: iat + 8 * 3600 }))).toBe((iat + 8 * 3600) * 1000 - REFRESH_MARGIN_MS);
    expect(refreshAt(jwt({ iat, exp: iat + 240 }))).toBe((iat + 120) * 1000);
    expect(refreshAt(jwt({ sub: 'x' }))).toBeNull();
    expect(refreshAt('not a token')).toBeNull();
    expect(delayUntil(5000, 1000)).toBe(4000);
    expect(delayUntil(900, 1000)).toBe(MIN_REFRESH_DELAY_MS);
  });

  test('the return address stays inside the console', () => {
    expect(safeNext('/numbers/12?x=1')).toBe('/numbers/12?x=1');
    for (const bad of ['//evil.example', 'https://evil.example', '/\\evil', null, '', '/login?next=/x']) {
      expect(safeNext(bad)).toBe('/');
    }
  });
});
