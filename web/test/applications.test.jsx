import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRouter, Route, Routes } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { ApplicationsRoutes } from '../src/apps/Applications.jsx';
import { fakeServer, jwt, loginBody } from './fake-server.js';

const app = { id: 'a1', name: 'Main', call_flow_sid: null, call_hook_url: 'https://h.example/v', call_hook_method: 'POST',
  call_status_hook_url: null, app_json: null, language: 'en-US', voice: 'kal', basic_auth_username: null,
  has_basic_auth_password: false, updated_at: '2026-01-01T00:00:00Z' };

function renderAt(path) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <AuthProvider><Routes><Route path="/applications/*" element={<ApplicationsRoutes />} /></Routes></AuthProvider>
    </MemoryRouter>,
  );
}

beforeEach(() => localStorage.setItem('admin_auth_token', jwt({ exp: Math.floor(Date.now() / 1000) + 3600 })));
afterEach(() => { cleanup(); localStorage.clear(); sessionStorage.clear(); });

describe('the applications list', () => {
  test('says what each answers with, and pages by cursor (Load more appends the next page)', async () => {
    const server = fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'GET /api/call-flows': () => [200, { items: [], next_cursor: null }],
      'GET /api/applications': () => (server.calls.at(-1).path.includes('cursor=c2')
        ? [200, { items: [{ ...app, id: 'a2', name: 'Static', call_hook_url: null, app_json: [{ verb: 'hangup' }] }], next_cursor: null }]
        : [200, { items: [app], next_cursor: 'c2' }]),
    });
    renderAt('/applications');
    await screen.findByRole('link', { name: 'Main' });
    expect(screen.getByRole('row', { name: /Main/ }).textContent).toContain('Webhook');
    fireEvent.click(screen.getByRole('button', { name: 'Load more' }));
    await screen.findByRole('link', { name: 'Static' });
    expect(screen.getByRole('row', { name: /Static/ }).textContent).toContain('Verb list (app_json)');
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });
});

describe('an application', () => {
  test('the verb list is checked by the server as typed; each problem is shown with its JSON Pointer', async () => {
    const server = fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'GET /api/applications/a1': () => [200, app],
      'GET /api/call-flows': () => [200, { items: [], next_cursor: null }],
      'POST /api/applications/validate': () => [200, { valid: false, verbs: [], warnings: [],
        errors: [{ index: 0, verb: 'dial', field: 'target', path: '/0/target', message: 'Missing data for required field.' }] }],
    });
    renderAt('/applications/a1');
    const box = await screen.findByLabelText('Verb list (app_json)');
    fireEvent.change(box, { target: { value: '[{"verb": "dial"}]' } });
    await screen.findByText('Missing data for required field.');
    expect(screen.getByText('/0/target')).toBeTruthy();
    const checks = server.calls.filter((c) => c.path === '/api/applications/validate');
    expect(checks.at(-1).body).toEqual({ app_json: [{ verb: 'dial' }] });
  });

  test('each verb with a form is edited in it: the list\'s text follows, the server\'s problem is beside its field', async () => {
    const server = fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'GET /api/applications/a1': () => [200, app],
      'GET /api/call-flows': () => [200, { items: [], next_cursor: null }],
      'POST /api/applications/validate': () => [200, { valid: false, verbs: [], warnings: [],
        errors: [{ index: 1, verb: 'dial', field: 'target', path: '/1/target/0/name', message: 'Not a valid phone number.' }] }],
    });
    renderAt('/applications/a1');
    const box = await screen.findByLabelText('Verb list (app_json)');
    fireEvent.change(box, { target: { value: '[{"verb": "say", "text": "Hello"}, {"verb": "dial", "target": [{"type": "phone", "name": "x"}]}, {"verb": "queue", "name": "q"}]' } });
    expect(screen.getByRole('group', { name: 'Verb 1: say' })).toBeTruthy();
    expect(screen.getByRole('group', { name: 'Verb 2: dial' })).toBeTruthy();
    expect(screen.queryByRole('group', { name: 'Verb 3: queue' })).toBeNull(); // no form: the text only
    await screen.findByText('0.name: Not a valid phone number.');
    const say = screen.getByRole('group', { name: 'Verb 1: say' });
    fireEvent.change(say.querySelector('[name="verb-0-loop"]'), { target: { value: '2' } });
    expect(JSON.parse(screen.getByLabelText('Verb list (app_json)').value)[0]).toEqual({ verb: 'say', text: 'Hello', loop: 2 });
    await waitFor(() => expect(server.calls.filter((c) => c.path === '/api/applications/validate').at(-1).body.app_json[0].loop).toBe(2));
  });

  test('a refused save keeps everything typed and says the server\'s refusal beside the field', async () => {
    fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'GET /api/applications/a1': () => [200, app],
      'GET /api/call-flows': () => [200, { items: [], next_cursor: null }],
      'PATCH /api/applications/a1': () => [422, { code: 'unsafe_url', message: 'URL points to a non-public address (private)',
        details: { reason: 'private', field: 'call_hook_url' } }],
    });
    renderAt('/applications/a1');
    const hook = await screen.findByLabelText('Call hook URL');
    fireEvent.change(hook, { target: { value: 'https://10.0.0.1/hook' } });
    fireEvent.change(screen.getByLabelText('Voice'), { target: { value: 'slt' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save application' }));
    await waitFor(() => expect(hook.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText(/must be https:\/\/ \(or wss:\/\/ for a call hook\)/)).toBeTruthy();
    expect(hook.value).toBe('https://10.0.0.1/hook');
    expect(screen.getByLabelText('Voice').value).toBe('slt');
    expect(JSON.parse(sessionStorage.getItem('console:draft:application:a1')).voice).toBe('slt');
  });
});
