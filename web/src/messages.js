/**
 * API error codes as the words a person reads. The server's `message` is already written for
 * people; these replace it where the console can say more (what to do next), and map each
 * code to the field it belongs beside.
 */

const HUMAN = {
  invalid_credentials: 'The username or password is not right.',
  too_many_login_attempts: 'Too many failed attempts. Wait a moment before trying again.',
  invalid_mfa_code: 'That code is not right. Enter the code your authenticator app shows now.',
  mfa_code_reused: 'That code was already used. Wait for the next code.',
  mfa_challenge_expired: 'The sign-in took too long. Enter your password again.',
  invalid_mfa_challenge: 'This sign-in can no longer be completed. Enter your password again.',
  mfa_enrolment_required: 'Your account requires a second factor and you have none yet. Set one up to sign in.',
  invalid_confirmation_code: 'That code is not right. Enter the code your authenticator app shows now for this account.',
  totp_already_enrolled: 'You already have a second factor. An administrator can reset it if you lost the device.',
  totp_enrolment_not_started: 'Start the set-up again: the secret was not kept.',
  sso_state_invalid: 'This sign-in took too long or was already used. Sign in again.',
  sso_denied: 'The identity provider did not sign you in.',
  sso_user_not_provisioned: 'Your organisation has not given you access to this account yet. Ask an administrator.',
  sso_role_not_mapped: 'Your organisation gives you no role in this account. Ask an administrator.',
  sso_user_disabled: 'Your user is deactivated. Ask an administrator.',
  sso_not_configured: 'Single sign-on is not set up for this account. Sign in with your password.',
  sso_provider_unavailable: 'The identity provider could not be reached. Retry in a moment.',
  api_key_not_allowed: 'API keys cannot manage API keys: sign in as a user.',
  cannot_change_self: 'You cannot do this to your own user (ask another administrator).',
  username_taken: 'This username is already in use.',
  admin_required: 'Only an administrator can do this.',
  tenant_required: 'Open the console at your account\'s own address (your-account.<domain>).',
  number_taken: 'This number is already in use.',
  license_required: 'Your account has no license for this.',
  permission_denied: 'You do not have the permission for this.',
  network_error: 'The server could not be reached. Check the connection, then retry.',
  internal_error: 'The server failed to do this. It has been logged; retry in a moment.',
  database_unavailable: 'The service is temporarily unavailable. Retry in a moment.',
  session_store_unavailable: 'The service is temporarily unavailable. Retry in a moment.',
  token_expired: 'Your session has expired. Sign in again.',
  token_revoked: 'You were signed out. Sign in again.',
  platform_read_only: 'This is a platform carrier: you can route calls through it, but not change it.',
  duplicate_carrier: 'This carrier is already in the route\'s carrier set.',
  callback_in_progress: 'The customer is being dialled now, so this callback cannot be changed. Wait for the attempt to end.',
  callback_finished: 'This callback has already ended (completed or failed); it cannot be changed.',
  callback_cancelled: 'This callback was cancelled. Request a new one instead.',
  callback_not_found: 'This callback no longer exists in this queue. Reload the list.',
  queue_not_found: 'This queue no longer exists. Choose another queue.',
  not_a_queue_member: 'Only an administrator, a supervisor or an agent of this queue can see its callbacks.',
};

/** The sentence to show for an ApiError. */
export function humanMessage(error) {
  if (!error) return '';
  const text = HUMAN[error.code] || error.message || 'Something went wrong.';
  if (error.code === 'too_many_login_attempts' && error.retryAfter) {
    return `Too many failed attempts. Try again in ${error.retryAfter} s.`;
  }
  return text;
}

/** Codes that belong beside one field whatever the form (the field's name in the API body). */
const CODE_FIELD = {
  unsafe_url: 'url',
  number_taken: 'number',
  invalid_mfa_code: 'code',
  mfa_code_reused: 'code',
  invalid_confirmation_code: 'code',
  username_taken: 'username',
  invalid_route_regex: 'regex', // the server's message names what RE2 refused
  duplicate_carrier: 'carrier_id',
};

/** Codes whose `details` are already {field: [messages]} (no `json` location level). */
const FIELD_DETAILS = new Set(['invalid_reference', 'invalid_gateway']);

/**
 * Split an ApiError into {fields: {name: message}, form: message|null}: validation details and
 * field codes go beside their field, everything else above the form.
 * `known`: the fields the form shows (a message for another field goes to the form).
 */
export function errorsByField(error, known = []) {
  const fields = {};
  if (!error) return { fields, form: null };
  const details = error.details;
  if (error.code === 'validation_failed' && details && typeof details === 'object') {
    const located = { ...(details.json || {}), ...(details.query || {}) };
    for (const [name, messages] of Object.entries(located)) {
      fields[name] = Array.isArray(messages) ? messages.join(' ') : String(messages);
    }
  } else if (FIELD_DETAILS.has(error.code) && details && typeof details === 'object') {
    for (const [name, messages] of Object.entries(details)) {
      fields[name] = Array.isArray(messages) ? messages.join(' ') : String(messages);
    }
  } else if (CODE_FIELD[error.code]) {
    fields[CODE_FIELD[error.code]] = humanMessage(error);
  }
  const shown = Object.fromEntries(Object.entries(fields).filter(([name]) => known.includes(name)));
  const unplaced = Object.entries(fields).filter(([name]) => !known.includes(name));
  let form = null;
  if (unplaced.length) form = unplaced.map(([name, text]) => `${name}: ${text}`).join(' ');
  else if (!Object.keys(fields).length) form = humanMessage(error);
  return { fields: shown, form };
}
