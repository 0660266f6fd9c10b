/**
 * The Callbacks screen's rules, apart from React so they are tested alone: which actions a
 * callback offers by its status (the API's: only a `pending` one can be cancelled or
 * rescheduled), and the reschedule form as the PATCH body.
 */

export const CALLBACK_STATUSES = ['pending', 'dialing', 'completed', 'failed', 'cancelled'];

/** Cancel and Reschedule are offered on a pending callback only (the API answers 409 otherwise). */
export function callbackActions(callback) {
  return callback.status === 'pending' ? ['cancel', 'reschedule'] : [];
}

/** An ISO instant as the datetime-local value in the browser's time ('' for none). */
export function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The reschedule form ({scheduled_at: datetime-local or '', priority: text}) as the PATCH body:
 * an empty time is `null` ("as soon as an agent is free"), a priority only when it changed
 * (a non-number is sent as typed, so the server's refusal lands beside the field).
 */
export function rescheduleBody(values, callback) {
  const body = { scheduled_at: values.scheduled_at ? new Date(values.scheduled_at).toISOString() : null };
  const text = String(values.priority ?? '').trim();
  if (text !== '' && text !== String(callback.priority)) {
    body.priority = /^-?\d+$/.test(text) ? Number(text) : text;
  }
  return body;
}
