import { vi } from 'vitest';

/**
 * A stand-in for the API in component tests: answers by "METHOD path" from a table of
 * handlers and records every request. The end-to-end suite (e2e/) runs against the real API.
 */
export function fakeServer(routes) {
  const calls = [];
  const fetch = vi.fn(async (url, init = {}) => {
    const path = String(url);
    const method = init.method || 'GET';
    const body = init.body ? JSON.parse(init.body) : undefined;
    calls.push({ method, path, body, auth: init.headers?.Authorization });
    const handler = routes[`${method} ${path.split('?')[0]}`];
    const [status, payload] = handler ? handler(body, calls.length) : [404, { code: 'not_found', message: 'no route' }];
    return new Response(status === 204 ? null : JSON.stringify(payload), {
      status, headers: { 'Content-Type': 'application/json' } });
  });
  globalThis.fetch = fetch;
  return { calls, fetch };
}

export const jwt = (payload) => `eyJhbGciOiJIUzI1NiJ9.${btoa(JSON.stringify(payload)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}.sig`;

export const loginBody = (token) => ({
  token, token_type: 'Bearer', expires_in: 600, session: 'admin',
  user: { id: 'u1', username: 'admin', role: 'admin', permissions: [] },
  account: { id: 'a1', subdomain: 'acme', licenses: ['programmable-voice'] },
});
