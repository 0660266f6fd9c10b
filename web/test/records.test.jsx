import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { AuthProvider } from '../src/auth.jsx';
import { attachmentName, queryString } from '../src/files.js';
import { CallRecordDetail, CallRecords } from '../src/screens/CallRecords.jsx';
import { journeySteps } from '../src/screens/journey.js';
import { summaryTalk } from '../src/screens/summary.js';
import { fakeServer, jwt, loginBody } from './fake-server.js';

let token;
beforeEach(() => {
  token = jwt({ exp: Math.floor(Date.now() / 1000) + 3600 });
  localStorage.setItem('admin_auth_token', token);
  URL.createObjectURL = vi.fn(() => 'blob:csv');
  URL.revokeObjectURL = vi.fn();
});
afterEach(() => { cleanup(); localStorage.clear(); });

const refresh = () => [200, loginBody(localStorage.getItem('admin_auth_token'))];

/** The address the page is at (its query: the applied filters). */
function Address() {
  const { search } = useLocation();
  return <output aria-label="Address">{search}</output>;
}

function renderAt(entry) {
  return render(
    <MemoryRouter initialEntries={[entry]}>
      <AuthProvider>
        <Address />
        <Routes>
          <Route path="/calls" element={<CallRecords />} />
          <Route path="/calls/:id" element={<CallRecordDetail />} />
        </Routes>
      </AuthProvider>
    </MemoryRouter>,
  );
}

describe('pure helpers', () => {
  test('a journey is its steps in order, kind and detail; a step may repeat', () => {
    expect(journeySteps('ivr > queue:sales > agent:alice > queue:sales')).toEqual([
      { kind: 'ivr', detail: '' }, { kind: 'queue', detail: 'sales' }, { kind: 'agent', detail: 'alice' },
      { kind: 'queue', detail: 'sales' }]);
    expect(journeySteps(null)).toEqual([]);
  });

  test('the export file is named as Content-Disposition says, else the fallback', () => {
    expect(attachmentName('attachment; filename=call-records-20260301T120000Z.csv', 'x.csv')).toBe('call-records-20260301T120000Z.csv');
    expect(attachmentName('attachment; filename="a b.csv"', 'x.csv')).toBe('a b.csv');
    expect(attachmentName(null, 'x.csv')).toBe('x.csv');
    expect(queryString({ a: '1', b: '', c: null })).toBe('?a=1');
  });
});

describe('the summary\'s talk', () => {
  const answered = { answered_at: '2026-03-01T12:00:01Z', talk_ms: 42000, agent_id: null, queue_id: null, segments: [] };
  const summary = { talk_ms: 0, ivr_ms: 42000, queue_wait_ms: 0, abandoned: false };

  test('an answered call nobody joined (IVR, webhook) shows its talk with the application', () => {
    expect(summaryTalk(answered, summary)).toEqual({ ms: 42000, withApplication: true });
  });

  test('a call with an agent or a dialled party keeps the conversation time, even 0', () => {
    expect(summaryTalk({ ...answered, agent_id: 'ag1', segments: [{}] }, { ...summary, talk_ms: 30000 }))
      .toEqual({ ms: 30000, withApplication: false });
    expect(summaryTalk(answered, { ...summary, talk_ms: 12000 })).toEqual({ ms: 12000, withApplication: false });
    expect(summaryTalk({ ...answered, agent_id: 'ag1' }, summary)).toEqual({ ms: 0, withApplication: false });
  });

  test('a queue call nobody answered, or a call never answered, keeps 0', () => {
    expect(summaryTalk({ ...answered, queue_id: 'q1' }, { ...summary, queue_wait_ms: 40000, abandoned: true }).ms).toBe(0);
    expect(summaryTalk(answered, { ...summary, abandoned: true }).ms).toBe(0);
    expect(summaryTalk({ ...answered, answered_at: null, talk_ms: 0 }, summary).ms).toBe(0);
    expect(summaryTalk(answered, null)).toEqual({ ms: 42000, withApplication: true });
  });
});

describe('call records', () => {
  test('the filters go to the list and the CSV export alike; the export is fetched with the token, not a link', async () => {
    const server = fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records': () => [200, { items: [], next_cursor: null }],
      'GET /api/agents': () => [200, { items: [{ id: 'ag1', username: 'alice' }], next_cursor: null }],
      'GET /api/queues': () => [200, { items: [{ id: 'q1', name: 'Sales' }], next_cursor: null }],
      'GET /api/call-records/export': () => [200, 'Time,Direction\r\n'],
    });
    renderAt('/calls?number=555&agent_id=ag1&queue_id=q1&direction=inbound');
    await screen.findByText('No call records match.');
    expect((await screen.findByLabelText('Agent')).value).toBe('ag1');
    expect(screen.getByLabelText('Queue').value).toBe('q1');
    expect(screen.getByLabelText('Number').value).toBe('555');
    const listed = server.calls.find((c) => c.path.startsWith('/api/call-records?'));
    expect(new URLSearchParams(listed.path.split('?')[1]).get('number')).toBe('555');

    fireEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    await screen.findByText('Exported call-records.csv.');
    const exported = server.calls.find((c) => c.path.startsWith('/api/call-records/export'));
    const query = new URLSearchParams(exported.path.split('?')[1]);
    expect([query.get('number'), query.get('agent_id'), query.get('queue_id'), query.get('direction')])
      .toEqual(['555', 'ag1', 'q1', 'inbound']);
    expect(exported.auth).toBe(`Bearer ${token}`);
  });

  test('From, To and Status applied: the address keeps them as typed, the API gets the local times as UTC instants and the status', async () => {
    const server = fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records': () => [200, { items: [], next_cursor: null }],
    });
    renderAt('/calls');
    await screen.findByText('No call records match.');
    fireEvent.change(screen.getByLabelText('From'), { target: { value: '2026-03-01T09:30' } });
    fireEvent.change(screen.getByLabelText('To'), { target: { value: '2026-03-02T18:00' } });
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'no-answer' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));

    await waitFor(() => expect(screen.getByLabelText('Address').textContent).toContain('status=no-answer'));
    const address = new URLSearchParams(screen.getByLabelText('Address').textContent);
    expect([address.get('from'), address.get('to'), address.get('status')])
      .toEqual(['2026-03-01T09:30', '2026-03-02T18:00', 'no-answer']);
    await waitFor(() => expect(server.calls.filter((c) => c.path.startsWith('/api/call-records?')).length).toBe(2));
    const query = new URLSearchParams(server.calls.filter((c) => c.path.startsWith('/api/call-records?'))[1].path.split('?')[1]);
    // datetime-local has no zone: the browser's local wall time, sent as the instant it names
    expect([query.get('from'), query.get('to'), query.get('status')]).toEqual([
      new Date(2026, 2, 1, 9, 30).toISOString(), new Date(2026, 2, 2, 18, 0).toISOString(), 'no-answer']);
    expect(query.get('from')).toMatch(/^2026-03-0[12]T\d\d:\d\d:00\.000Z$/);
  });

  test('an address with From, To and Status opens with them filled in and listed by them', async () => {
    const server = fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records': () => [200, { items: [], next_cursor: null }],
    });
    renderAt('/calls?from=2026-03-01T09:30&to=2026-03-02T18:00&status=busy');
    await screen.findByText('No call records match.');
    expect([screen.getByLabelText('From').value, screen.getByLabelText('To').value, screen.getByLabelText('Status').value])
      .toEqual(['2026-03-01T09:30', '2026-03-02T18:00', 'busy']);
    const query = new URLSearchParams(server.calls.find((c) => c.path.startsWith('/api/call-records?')).path.split('?')[1]);
    expect([query.get('from'), query.get('to'), query.get('status')]).toEqual([
      new Date(2026, 2, 1, 9, 30).toISOString(), new Date(2026, 2, 2, 18, 0).toISOString(), 'busy']);
  });

  test('a refused export says why and the filters stay', async () => {
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records': () => [200, { items: [], next_cursor: null }],
      'GET /api/call-records/export': () => [403, { code: 'permission_denied', message: 'x' }],
    });
    renderAt('/calls?number=555');
    await screen.findByText('No call records match.');
    expect(screen.queryByLabelText('Agent')).toBeNull(); // no /api/agents for this user: not offered
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    expect((await screen.findByRole('alert')).textContent).toBe('You do not have the permission for this.');
    expect(screen.getByLabelText('Number').value).toBe('555');
  });

  test('the list names each record\'s agent and queue (the API\'s names; one deleted since by its id\'s start), also for a user who cannot list them', async () => {
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records': () => [200, { items: [
        { id: 'r1', started_at: '2026-03-01T12:00:00Z', direction: 'inbound', from_number: '4930111', to_number: '4930222',
          agent_id: 'ag1', agent_name: 'alice', queue_id: 'q1', queue_name: 'Sales', status: 'completed', talk_ms: 5000 },
        { id: 'r2', started_at: '2026-03-01T11:00:00Z', direction: 'inbound', from_number: '4930333', to_number: '4930222',
          agent_id: '0123456789ab-gone', agent_name: null, queue_id: null, queue_name: null, status: 'completed', talk_ms: 0 },
      ], next_cursor: null }],
    });
    renderAt('/calls');
    await screen.findByText('alice');
    const cells = async (n) => [...(await screen.findAllByRole('row'))[n].querySelectorAll('td')].map((td) => td.textContent);
    expect(screen.getAllByRole('columnheader').map((th) => th.textContent)).toEqual(
      ['Time', 'Direction', 'Caller', 'Callee', 'Agent', 'Queue', 'Status', 'Talk']);
    expect((await cells(1)).slice(4, 6)).toEqual(['alice', 'Sales']);
    expect((await cells(2)).slice(4, 6)).toEqual(['deleted (01234567)', '']);
  });

  test('a record: its journey in order, and the recording played from a media ticket URL without the token', async () => {
    const server = fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records/r1': () => [200, { id: 'r1', started_at: '2026-03-01T12:00:00Z', direction: 'inbound',
        status: 'completed', journey: 'ivr > queue:sales > agent:alice', summary: null, segments: [] }],
      'GET /api/call-records/r1/recordings': () => [200, { items: [{ id: 'rec1', created_at: '2026-03-01T12:00:00Z',
        duration_ms: 5000, format: 'wav', audio_url: '/api/recordings/rec1/audio' }] }],
      'GET /api/call-records/r1/transcript': () => [404, { code: 'transcript_not_found', message: 'x' }],
      'POST /api/recordings/rec1/tickets': () => [201, { ticket: 'tk', expires_in_seconds: 300,
        stream_url: '/api/recordings/rec1/stream?ticket=tk' }],
    });
    renderAt('/calls/r1');
    const steps = await screen.findByRole('list', { name: "The call's path, in order" });
    expect([...steps.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['ivr', 'queue sales', 'agent alice']);
    const audio = await screen.findByLabelText(/^Recording of/);
    await waitFor(() => expect(audio.getAttribute('src')).toBe('/api/recordings/rec1/stream?ticket=tk'));
    expect(audio.getAttribute('src')).not.toContain(token);
    expect(server.calls.some((c) => c.path.includes('/audio'))).toBe(false); // nothing downloaded whole
    expect(screen.queryByRole('slider')).toBeNull(); // no peaks (404 here): the player alone
  });

  test('a record\'s recording has its waveform from the peaks endpoint; a click on it seeks the player', async () => {
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records/r1': () => [200, { id: 'r1', started_at: '2026-03-01T12:00:00Z', journey: null, segments: [] }],
      'GET /api/call-records/r1/recordings': () => [200, { items: [{ id: 'rec1', created_at: '2026-03-01T12:00:00Z', format: 'wav', duration_ms: 8000 }] }],
      'GET /api/call-records/r1/transcript': () => [404, { code: 'transcript_not_found', message: 'x' }],
      'POST /api/recordings/rec1/tickets': () => [201, { stream_url: '/s?ticket=t1' }],
      'GET /api/recordings/rec1/peaks': () => [200, { recording_id: 'rec1', duration_seconds: 8, peaks: Array(200).fill(0.25) }],
    });
    renderAt('/calls/r1');
    const audio = await screen.findByLabelText(/^Recording of/);
    const waveform = await screen.findByRole('slider', { name: /^Seek in the recording of/ });
    expect(waveform.querySelectorAll('rect').length).toBe(200);
    waveform.getBoundingClientRect = () => ({ left: 0, width: 400, top: 0, height: 48, right: 400, bottom: 48 });
    fireEvent.click(waveform, { clientX: 300 });
    expect(audio.currentTime).toBe(6);
  });

  test('a record\'s segments: one row per agent in order, named (one deleted since by its id\'s start), with talk, hold, handle and the transfer and conference flags', async () => {
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records/r7': () => [200, { id: 'r7', started_at: '2026-03-01T12:00:00Z', direction: 'inbound',
        status: 'completed', journey: 'queue:sales > agent:alice > agent:bob', summary: null, segments: [
          { agent_id: 'ag1', agent_name: 'alice', started_at: '2026-03-01T12:00:10Z', ended_at: '2026-03-01T12:01:10Z',
            talk_ms: 45000, hold_ms: 12500, acw_ms: 0, handle_ms: 57500, transferred: true, conferenced: false },
          { agent_id: 'ag2', agent_name: 'bob', started_at: '2026-03-01T12:01:10Z', ended_at: '2026-03-01T12:03:00Z',
            talk_ms: 90000, hold_ms: 0, acw_ms: 20000, handle_ms: 110000, transferred: false, conferenced: true },
          { agent_id: '89abcdef0123-gone', agent_name: null, started_at: '2026-03-01T12:03:00Z', ended_at: null,
            talk_ms: 3000, hold_ms: 0, acw_ms: 0, handle_ms: 3000, transferred: false, conferenced: false },
        ] }],
      'GET /api/call-records/r7/recordings': () => [200, { items: [] }],
      'GET /api/call-records/r7/transcript': () => [404, { code: 'transcript_not_found', message: 'x' }],
    });
    renderAt('/calls/r7');
    const table = (await screen.findByText('The agents who had the conversation, in order')).closest('table');
    const rows = [...table.querySelectorAll('tr')].map((tr) => [...tr.children].map((cell) => cell.textContent));
    expect(rows[0]).toEqual(['Agent', 'Started', 'Talk', 'Hold', 'Handle', 'Transferred', 'Conferenced']);
    const when = (iso) => new Date(iso).toLocaleString();
    expect(rows.slice(1)).toEqual([
      ['alice', when('2026-03-01T12:00:10Z'), '45.0 s', '12.5 s', '57.5 s', 'yes', 'no'],
      ['bob', when('2026-03-01T12:01:10Z'), '90.0 s', '0.0 s', '110.0 s', 'no', 'yes'],
      ['deleted (89abcdef)', when('2026-03-01T12:03:00Z'), '3.0 s', '0.0 s', '3.0 s', 'no', 'no'],
    ]);
    expect(screen.queryByText('No agent took part.')).toBeNull();
  });

  test('an agentless answered call: the summary shows the IVR time and the talk with the application, not 0', async () => {
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records/r9': () => [200, { id: 'r9', started_at: '2026-03-01T12:00:00Z', answered_at: '2026-03-01T12:00:01Z',
        direction: 'inbound', status: 'completed', talk_ms: 42000, duration_ms: 43000, agent_id: null, queue_id: null,
        journey: 'webhook', summary: { talk_ms: 0, ivr_ms: 42000, queue_wait_ms: 0, hold_count: 0, hold_ms: 0, aht_ms: 0, abandoned: false },
        segments: [] }],
      'GET /api/call-records/r9/recordings': () => [200, { items: [] }],
      'GET /api/call-records/r9/transcript': () => [404, { code: 'transcript_not_found', message: 'x' }],
    });
    renderAt('/calls/r9');
    const talk = (await screen.findByText('Talk')).nextElementSibling;
    expect(talk.textContent).toBe('42.0 s with the application: no agent or other party joined the call');
    expect(screen.getByText('In the application (IVR)').nextElementSibling.textContent).toBe('42.0 s');
  });

  test('a player whose ticket expired asks for one new ticket; failing again, it says so', async () => {
    let tickets = 0;
    fakeServer({
      'POST /auth/refresh': refresh,
      'GET /api/call-records/r1': () => [200, { id: 'r1', started_at: '2026-03-01T12:00:00Z', journey: null, segments: [] }],
      'GET /api/call-records/r1/recordings': () => [200, { items: [{ id: 'rec1', created_at: '2026-03-01T12:00:00Z', format: 'wav' }] }],
      'GET /api/call-records/r1/transcript': () => [404, { code: 'transcript_not_found', message: 'x' }],
      'POST /api/recordings/rec1/tickets': () => { tickets += 1; return [201, { stream_url: `/s?ticket=t${tickets}` }]; },
    });
    renderAt('/calls/r1');
    const audio = await screen.findByLabelText(/^Recording of/);
    await waitFor(() => expect(audio.getAttribute('src')).toBe('/s?ticket=t1'));
    expect(screen.getByText('No journey was recorded for this call.')).toBeTruthy();
    fireEvent.error(audio);
    await waitFor(() => expect(audio.getAttribute('src')).toBe('/s?ticket=t2'));
    fireEvent.error(audio);
    expect((await screen.findByRole('alert')).textContent).toBe('The recording could not be played: its file is gone or unreadable.');
    expect(tickets).toBe(2); // not a loop of tickets for a file that is gone
  });
});
