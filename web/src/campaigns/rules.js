/**
 * The campaign screens' rules, pure so they are unit-tested without a server: which actions a
 * status offers (the API's state machine, app/campaigns/states.py — the server still refuses
 * an illegal move with 409 `illegal_transition`), the form <-> API body, contact uploads and
 * the server's per-row errors, and progress from contact statuses.
 */

export const DIALER_MODES = ['preview', 'progressive', 'power', 'predictive'];
export const RETRY_OUTCOMES = ['busy', 'no_answer', 'machine', 'failed', 'abandoned'];
export const CONTACT_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'do_not_call'];
export const WEEKDAYS = [[1, 'Mon'], [2, 'Tue'], [3, 'Wed'], [4, 'Thu'], [5, 'Fri'], [6, 'Sat'], [7, 'Sun']];

/** The actions each status allows (start: draft/scheduled; pause: running/scheduled; …). */
const ACTIONS = {
  draft: ['start', 'archive'],
  scheduled: ['start', 'pause', 'stop'],
  running: ['pause', 'stop'],
  paused: ['resume', 'stop'],
  completed: ['archive'],
  archived: [],
};

export const ACTION_LABELS = { start: 'Start', pause: 'Pause', resume: 'Resume', stop: 'Stop', archive: 'Archive' };

export function actionsFor(status) {
  return ACTIONS[status] || [];
}

/** A campaign (API body) as the form's values: strings and lists the inputs hold. */
export function formFromCampaign(c) {
  const retries = {};
  for (const outcome of RETRY_OUTCOMES) {
    const rule = c?.retry_policy?.[outcome];
    retries[outcome] = { delay_seconds: rule ? String(rule.delay_seconds) : '', max_attempts: rule ? String(rule.max_attempts) : '' };
  }
  return {
    name: c?.name || '',
    dialer_mode: c?.dialer_mode || 'preview',
    agent_group_ids: c?.agent_group_ids || [],
    carrier_id: c?.carrier_id || '',
    caller_id: c?.caller_id || '',
    window_start: c?.window_start || '08:00',
    window_end: c?.window_end || '21:00',
    allowed_weekdays: c?.allowed_weekdays || [1, 2, 3, 4, 5, 6, 7],
    retries,
  };
}

const number = (text) => (text === '' ? undefined : Number(text));

/** The form's values as the API's body (PATCH or POST): empty choices are null, retry rules whole. */
export function campaignBody(form) {
  const retry_policy = {};
  for (const outcome of RETRY_OUTCOMES) {
    const rule = form.retries[outcome];
    if (rule.delay_seconds !== '' || rule.max_attempts !== '') {
      retry_policy[outcome] = { delay_seconds: number(rule.delay_seconds), max_attempts: number(rule.max_attempts) };
    }
  }
  return {
    name: form.name,
    dialer_mode: form.dialer_mode,
    agent_group_ids: form.agent_group_ids,
    carrier_id: form.carrier_id || null,
    caller_id: form.caller_id || null,
    window_start: form.window_start,
    window_end: form.window_end,
    allowed_weekdays: [...form.allowed_weekdays].sort(),
    retry_policy,
  };
}

/**
 * How a chosen contacts file is sent: a `.json` file (or JSON text) as `{"contacts": [...]}`
 * (a bare list is wrapped) to POST …/contacts, anything else as text/csv to …/contacts/import.
 * Returns {kind: 'json', body} | {kind: 'csv', text} | {kind: 'error', message}.
 */
export function contactsUpload(name, text) {
  const looksJson = /\.json$/i.test(name) || /^\s*[[{]/.test(text);
  if (!looksJson) return { kind: 'csv', text };
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'error', message: 'The file is not valid JSON.' };
  }
  if (Array.isArray(parsed)) return { kind: 'json', body: { contacts: parsed } };
  if (parsed && Array.isArray(parsed.contacts)) return { kind: 'json', body: { contacts: parsed.contacts } };
  return { kind: 'error', message: 'A JSON file must be a list of contacts or {"contacts": [...]}.' };
}

/**
 * The server's per-row errors of a refused import (all or nothing): `details.rows` for CSV
 * (line numbers, the header is row 1), `details.contacts` for JSON (list indexes), each
 * {row, field, message}; the first bad item's message when there is no list.
 */
export function rowErrors(error) {
  const details = error?.details;
  const rows = (details && (details.rows || details.contacts)) || null;
  if (Array.isArray(rows)) {
    return rows.map((r) => ({ row: r.row ?? r.index, field: r.field || '', message: r.message || '' }));
  }
  // the body's own shape refused before the rows were read: {json: {contacts: {index: {field: [..]}}}}
  const located = details?.json?.contacts;
  if (located && typeof located === 'object' && !Array.isArray(located)) {
    return Object.entries(located).flatMap(([index, fields]) => (typeof fields === 'object' && !Array.isArray(fields)
      ? Object.entries(fields).map(([field, messages]) => ({ row: Number(index), field, message: [].concat(messages).join(' ') }))
      : [{ row: Number(index), field: '', message: [].concat(fields).join(' ') }]));
  }
  return [];
}

/** Progress from counts by contact status: {total, done, percent}; done = ended one way or another. */
export function progress(counts) {
  const total = CONTACT_STATUSES.reduce((sum, s) => sum + (counts[s] || 0), 0);
  const done = (counts.completed || 0) + (counts.failed || 0) + (counts.do_not_call || 0);
  return { total, done, percent: total ? Math.round((100 * done) / total) : 0 };
}

/**
 * The live figures a supervisor reads at a glance (GET /api/campaigns/:id/figures): rows of
 * {label, value, alert}; alert marks an abandon rate over the campaign's cap.
 */
export function liveFigures(figures) {
  if (!figures) return [];
  const a = figures.attempts || {};
  const agents = figures.agents || {};
  const calls = figures.calls || {};
  const rate = figures.abandon_rate_percent;
  return [
    { label: 'Abandon rate',
      value: rate === null || rate === undefined
        ? `no live answer yet (cap ${figures.abandon_cap_percent}%)`
        : `${rate}% of live answers (cap ${figures.abandon_cap_percent}%)`,
      alert: Boolean(figures.over_cap) },
    { label: 'Attempts',
      value: `${a.dialled || 0} ended: ${a.human || 0} reached a person, ${a.machine || 0} machines, `
        + `${a.no_answer || 0} no answer, ${a.busy || 0} busy, ${a.failed || 0} failed, ${a.abandoned || 0} abandoned`,
      alert: false },
    { label: 'Agents',
      value: `${agents.waiting || 0} waiting, ${agents.busy || 0} busy, ${agents.wrap_up || 0} in wrap-up, ${agents.away || 0} away`,
      alert: false },
    { label: 'Calls now',
      value: `${calls.ringing || 0} ringing, ${calls.screening || 0} answered (machine check), `
        + `${calls.waiting || 0} waiting for an agent, ${calls.talking || 0} talking`,
      alert: false },
  ];
}
