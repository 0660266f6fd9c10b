/**
 * The Applications form's rules, apart from React so they are tested alone: an application as
 * the form's text values, the values as the API's body, and an API error placed beside its field
 * (SPEC's Application fields: call_flow_sid, call_hook_url, call_hook_method, app_json,
 * call_status_hook_url, language, voice).
 */
import { errorsByField, humanMessage } from '../messages.js';

export const FIELDS = ['name', 'call_flow_sid', 'call_hook_url', 'call_hook_method', 'call_status_hook_url',
  'app_json', 'language', 'voice', 'basic_auth_username', 'basic_auth_password'];

export const NEW_APPLICATION = {
  name: '', call_flow_sid: '', call_hook_url: '', call_hook_method: 'POST', call_status_hook_url: '',
  app_json: '', language: 'en-US', voice: 'kal', basic_auth_username: '', basic_auth_password: '',
};

/** Words for the codes of these screens (beside the field they belong to, or above the form). */
const WORDS = {
  unsafe_url: 'The server refused this URL: it must be https:// (or wss:// for a call hook) and reach a public address.',
  application_in_use: 'Phone numbers are answered by this application: give them another application first.',
  no_call_hook: 'Save a Call hook URL first: Try it sends the first request of a call to the saved hook.',
  call_hook_is_websocket: 'A WebSocket handler (wss://) answers over a live socket: Try it works with an https:// hook.',
  verb_list_rejected: 'The server refused the verb list: each problem is listed below it.',
};

export function words(error) {
  return (error && WORDS[error.code]) || humanMessage(error);
}

/** A saved application as the form's text values (the password is write-only: never shown). */
export function appValues(app) {
  return {
    name: app.name || '',
    call_flow_sid: app.call_flow_sid || '',
    call_hook_url: app.call_hook_url || '',
    call_hook_method: app.call_hook_method || 'POST',
    call_status_hook_url: app.call_status_hook_url || '',
    app_json: app.app_json == null ? '' : JSON.stringify(app.app_json, null, 2),
    language: app.language || '',
    voice: app.voice || '',
    basic_auth_username: app.basic_auth_username || '',
    basic_auth_password: '',
  };
}

/** The verb list as typed: {value} (null when empty) or {error} when it is not JSON. */
export function parseVerbList(text) {
  if (!String(text ?? '').trim()) return { value: null };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: `Not JSON: ${err.message}` };
  }
}

/** The form's values as the API's body ({body} or {fields} when the verb list is not JSON).
 * An empty optional field is null (cleared); an empty password is left out (kept). */
export function appBody(values) {
  const verbs = parseVerbList(values.app_json);
  if (verbs.error) return { fields: { app_json: verbs.error } };
  const orNull = (text) => (String(text ?? '').trim() ? String(text).trim() : null);
  const body = {
    name: values.name.trim(),
    call_flow_sid: orNull(values.call_flow_sid),
    call_hook_url: orNull(values.call_hook_url),
    call_hook_method: values.call_hook_method,
    call_status_hook_url: orNull(values.call_status_hook_url),
    app_json: verbs.value,
    language: values.language.trim(),
    voice: values.voice.trim(),
    basic_auth_username: orNull(values.basic_auth_username),
  };
  if (values.basic_auth_password) body.basic_auth_password = values.basic_auth_password;
  return { body };
}

/** A verb problem's place in the list, as a JSON Pointer (the API's `path`, or built from
 * index and field for a save's 422 verb_list_rejected). */
export function verbPointer(problem) {
  if (problem.path !== undefined) return problem.path || '/';
  const parts = [];
  if (problem.index !== null && problem.index !== undefined) parts.push(String(problem.index));
  if (problem.field) parts.push(...String(problem.field).split('.'));
  return parts.length ? `/${parts.join('/')}` : '/';
}

/** A save's ApiError as {fields: {name: message}, form, verbProblems: [{path, message}]}. */
export function appErrors(error) {
  if (!error || error.isOutage) return { fields: {}, form: null, verbProblems: [] };
  if (error.code === 'verb_list_rejected' && Array.isArray(error.details)) {
    return { fields: { app_json: words(error) }, form: null,
      verbProblems: error.details.map((p) => ({ path: verbPointer(p), message: p.message })) };
  }
  if (error.code === 'unsafe_url' && FIELDS.includes(error.details?.field)) {
    const field = error.details.field;
    const verbProblems = error.details.path ? [{ path: error.details.path, message: error.message }] : [];
    return { fields: { [field]: words(error) }, form: null, verbProblems };
  }
  if (WORDS[error.code] && error.code !== 'unsafe_url') return { fields: {}, form: words(error), verbProblems: [] };
  const { fields, form } = errorsByField(error, FIELDS);
  return { fields, form, verbProblems: [] };
}
