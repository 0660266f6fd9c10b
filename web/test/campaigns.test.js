import { describe, expect, test, vi } from 'vitest';
import { ApiError } from '../src/api.js';
import { loadProgressCounts } from '../src/campaigns/progress.js';
import {
  actionsFor, campaignBody, contactsUpload, formFromCampaign, liveFigures, progress, rowErrors,
} from '../src/campaigns/rules.js';

const CAMPAIGN = {
  name: 'Renewals', dialer_mode: 'progressive', agent_group_ids: ['q1'], carrier_id: 'c1', caller_id: '15551230000',
  window_start: '09:00', window_end: '18:00', allowed_weekdays: [1, 2, 3, 4, 5],
  retry_policy: { busy: { delay_seconds: 600, max_attempts: 3 }, no_answer: { delay_seconds: 3600, max_attempts: 3 },
    machine: { delay_seconds: 14400, max_attempts: 2 }, failed: { delay_seconds: 1800, max_attempts: 2 },
    abandoned: { delay_seconds: 3600, max_attempts: 3 } },
};

describe('campaign actions follow the state machine', () => {
  test.each([
    ['draft', ['start', 'archive']], ['scheduled', ['start', 'pause', 'stop']], ['running', ['pause', 'stop']],
    ['paused', ['resume', 'stop']], ['completed', ['archive']], ['archived', []], ['unknown', []],
  ])('%s offers %o', (status, actions) => {
    expect(actionsFor(status)).toEqual(actions);
  });
});

describe('the definition form', () => {
  test('a saved campaign round-trips through the form into the same body', () => {
    const body = campaignBody(formFromCampaign(CAMPAIGN));
    expect(body).toEqual({ ...CAMPAIGN });
  });

  test('no trunk or caller ID chosen is null; an edited retry is sent as numbers; days are sorted', () => {
    const form = formFromCampaign({ ...CAMPAIGN, carrier_id: null, caller_id: null });
    form.retries.busy = { delay_seconds: '60', max_attempts: '5' };
    form.allowed_weekdays = [5, 1];
    const body = campaignBody(form);
    expect([body.carrier_id, body.caller_id]).toEqual([null, null]);
    expect(body.retry_policy.busy).toEqual({ delay_seconds: 60, max_attempts: 5 });
    expect(body.allowed_weekdays).toEqual([1, 5]);
  });

  test("a new campaign's form has the API's defaults: preview, 08:00-21:00, every day", () => {
    const form = formFromCampaign(null);
    expect([form.dialer_mode, form.window_start, form.window_end, form.allowed_weekdays.length])
      .toEqual(['preview', '08:00', '21:00', 7]);
  });
});

describe('contacts files', () => {
  test('a CSV file is sent as text; JSON as {contacts}, a bare list wrapped; bad JSON refused before sending', () => {
    expect(contactsUpload('list.csv', 'phone_number\n+12125550101\n')).toEqual({ kind: 'csv', text: 'phone_number\n+12125550101\n' });
    expect(contactsUpload('list.json', '[{"phone_number": "+12125550101"}]'))
      .toEqual({ kind: 'json', body: { contacts: [{ phone_number: '+12125550101' }] } });
    expect(contactsUpload('x.txt', '{"contacts": []}')).toEqual({ kind: 'json', body: { contacts: [] } });
    expect(contactsUpload('list.json', '[{')).toMatchObject({ kind: 'error' });
    expect(contactsUpload('list.json', '{"people": []}')).toMatchObject({ kind: 'error' });
  });

  test("the server's per-row errors: CSV rows, JSON items, an unreadable file, the body's own shape", () => {
    const csv = new ApiError(422, 'validation_failed', 'Nothing imported: row 3, phone_number: bad',
      { rows: [{ row: 3, field: 'phone_number', message: 'bad' }, { row: 5, field: 'time_zone', message: 'unknown' }] });
    expect(rowErrors(csv)).toEqual([{ row: 3, field: 'phone_number', message: 'bad' }, { row: 5, field: 'time_zone', message: 'unknown' }]);
    const json = new ApiError(422, 'validation_failed', 'x', { contacts: [{ row: 0, field: 'phone_number', message: 'bad' }] });
    expect(rowErrors(json)).toEqual([{ row: 0, field: 'phone_number', message: 'bad' }]);
    const unreadable = new ApiError(422, 'invalid_csv', 'x', { rows: [{ row: 2, message: 'a row with 3 fields' }] });
    expect(rowErrors(unreadable)).toEqual([{ row: 2, field: '', message: 'a row with 3 fields' }]);
    const shape = new ApiError(422, 'validation_failed', 'x', { json: { contacts: { 1: { name: ['Not a string.'] } } } });
    expect(rowErrors(shape)).toEqual([{ row: 1, field: 'name', message: 'Not a string.' }]);
    expect(rowErrors(new ApiError(500, 'internal_error', 'x'))).toEqual([]);
  });
});

describe('progress', () => {
  test('done is completed, failed and do-not-call of every contact', () => {
    expect(progress({ pending: 5, in_progress: 1, completed: 3, failed: 1, do_not_call: 0 }))
      .toEqual({ total: 10, done: 4, percent: 40 });
    expect(progress({})).toEqual({ total: 0, done: 0, percent: 0 });
  });

  test('the counts are the figures endpoint\'s contacts, in one request', async () => {
    const call = vi.fn(async () => ({ contacts: { total: 3, pending: 2, completed: 1, left: 2 } }));
    expect((await loadProgressCounts(call, 'c1')).counts).toEqual({ total: 3, pending: 2, completed: 1, left: 2 });
    expect(call).toHaveBeenCalledTimes(1);
    expect(call.mock.calls[0][0]).toBe('/api/campaigns/c1/figures');
  });

  test('a refusal or failure of the figures is shown, not replaced by counting the contacts', async () => {
    for (const error of [new ApiError(404, 'campaign_not_found', 'x'), new ApiError(404, 'not_found', 'x')]) {
      const call = vi.fn(async () => { throw error; });
      await expect(loadProgressCounts(call, 'c1')).rejects.toBe(error);
      expect(call).toHaveBeenCalledTimes(1);
    }
  });
});

describe('live figures', () => {
  const figures = {
    attempts: { dialled: 41, human: 30, machine: 3, no_answer: 4, busy: 2, failed: 1, abandoned: 1 },
    abandon_rate_percent: 3.23, abandon_cap_percent: 3, over_cap: true,
    agents: { total: 5, waiting: 1, busy: 2, wrap_up: 1, away: 1 },
    calls: { ringing: 4, screening: 1, waiting: 0, talking: 2 },
  };

  test('the rate is read against the cap, and over it is an alert', () => {
    const [rate] = liveFigures(figures);
    expect(rate).toEqual({ label: 'Abandon rate', value: '3.23% of live answers (cap 3%)', alert: true });
    expect(liveFigures({ ...figures, abandon_rate_percent: null, over_cap: false })[0])
      .toEqual({ label: 'Abandon rate', value: 'no live answer yet (cap 3%)', alert: false });
  });

  test('attempts, agents and the calls in flight in plain words', () => {
    expect(liveFigures(figures).slice(1).map((r) => r.value)).toEqual([
      '41 ended: 30 reached a person, 3 machines, 4 no answer, 2 busy, 1 failed, 1 abandoned',
      '1 waiting, 2 busy, 1 in wrap-up, 1 away',
      '4 ringing, 1 answered (machine check), 0 waiting for an agent, 2 talking',
    ]);
    expect(liveFigures(undefined)).toEqual([]);
  });
});
