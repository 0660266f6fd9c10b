import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRouter } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { FlowEditor } from '../src/flows/FlowEditor.jsx';
import { fakeServer, jwt, loginBody } from './fake-server.js';

beforeAll(() => {
  // jsdom has no layout: the canvas library asks for these
  globalThis.ResizeObserver = class { observe() {} unobserve() {} disconnect() {} };
  globalThis.DOMMatrixReadOnly = class { constructor() { this.m22 = 1; } };
});
beforeEach(() => localStorage.setItem('admin_auth_token', jwt({ exp: Math.floor(Date.now() / 1000) + 3600 })));
afterEach(() => { cleanup(); localStorage.clear(); sessionStorage.clear(); });

const initial = { name: 'IVR', definition: { start: 'welcome', nodes: { welcome: { verb: { verb: 'say', text: 'Hi' } } } } };

describe('the flow editor from the keyboard', () => {
  test('add a gather, link it, add a branch, delete, undo; the server\'s refusal is shown on its node and nothing is lost', async () => {
    let saved = null;
    const server = fakeServer({
      'POST /auth/refresh': () => [200, loginBody(localStorage.getItem('admin_auth_token'))],
      'POST /api/call-flows/validate': () => [200, { valid: true, errors: [] }],
    });
    render(<MemoryRouter><AuthProvider>
      <FlowEditor flowId="f1" draftKey="draft:f1" initial={initial}
        onSave={async (body) => { saved = body; const e = new Error('x'); e.code = 'flow_invalid';
          e.details = [{ node: 'menu', field: 'verb.numDigits', message: 'Must be at least 1.' }]; throw e; }} />
    </AuthProvider></MemoryRouter>);

    fireEvent.change(screen.getByLabelText('Verb'), { target: { value: 'gather' } });
    fireEvent.change(screen.getByLabelText('Node id', { selector: '[name=node_id]' }), { target: { value: 'menu' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add node' }));
    expect(screen.getByLabelText('Selected node').value).toBe('menu');
    fireEvent.change(screen.getByLabelText('New branch: digits or words'), { target: { value: '1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add branch' }));
    fireEvent.change(screen.getByLabelText('Branch “1” goes to'), { target: { value: 'welcome' } });
    fireEvent.change(screen.getByLabelText('Selected node'), { target: { value: 'welcome' } });
    fireEvent.change(screen.getByLabelText('Next goes to'), { target: { value: 'menu' } });

    fireEvent.click(screen.getByRole('button', { name: 'Save flow' }));
    await waitFor(() => expect(saved).not.toBeNull());
    expect(saved.definition.nodes.welcome.next).toBe('menu');
    expect(saved.definition.nodes.menu.branches).toEqual({ 1: 'welcome' });
    expect(saved.definition.nodes.menu.verb.verb).toBe('gather');
    await screen.findAllByText('verb.numDigits: Must be at least 1.');
    expect(JSON.parse(sessionStorage.getItem('draft:f1')).definition.nodes.menu).toBeTruthy(); // kept after the refusal

    fireEvent.change(screen.getByLabelText('Selected node'), { target: { value: 'menu' } });
    fireEvent.click(screen.getByRole('button', { name: 'Delete node menu' }));
    expect(within(screen.getByLabelText('Selected node')).queryByText(/^menu/)).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Undo' }));
    expect(within(screen.getByLabelText('Selected node')).getByText(/^menu/)).toBeTruthy();
    await waitFor(() => expect(server.calls.some((c) => c.path === '/api/call-flows/validate')).toBe(true));
  });
});
