/**
 * Which screens a session is shown, from the login body (role, effective permissions, the
 * account's licenses). Only what is *shown*: the server still refuses whatever this gets wrong.
 * One rule per screen, so the navigation and the routes agree.
 */
export const SCREEN_RULES = {
  phoneNumbers: ({ role }) => role === 'admin',
  callRecords: ({ permissions }) => permissions.includes('recordings.view'),
  apiKeys: ({ licenses }) => licenses.includes('api-access'),
  users: ({ role }) => role === 'admin',
  carriers: ({ role }) => role === 'admin',
  lcr: ({ role }) => role === 'admin',
  liveView: ({ role, licenses }) => ['admin', 'supervisor'].includes(role) && licenses.includes('queue-mgmt'),
  queues: ({ role, licenses }) => role === 'admin' && licenses.includes('queue-mgmt'),
  // supervisors run the queues' day: they read the queues (GET /api/queues), list, cancel and
  // reschedule callbacks (docs/api.md "Queue callbacks"); creating one stays an admin's
  callbacks: ({ role, licenses }) => ['admin', 'supervisor'].includes(role) && licenses.includes('queue-mgmt'),
  applications: ({ role }) => role === 'admin',
  callFlows: ({ role }) => role === 'admin',
  // not a screen: the live view's listen/whisper/barge buttons (the API's supervision rule)
  supervise: ({ role, licenses }) => ['admin', 'supervisor'].includes(role) && licenses.includes('queue-mgmt'),
  account: () => true, // read-only but for an administrator (the API answers /api/account to admins)
  campaigns: ({ role }) => role === 'admin',
};

/** The facts the rules read, from the session's identity ({user, account}) or null. */
export function accessFacts(identity) {
  return {
    role: identity?.user?.role || null,
    permissions: identity?.user?.permissions || [],
    licenses: identity?.account?.licenses || [],
  };
}

/** Whether `screen` (a key of SCREEN_RULES) is shown to this identity. */
export function canSee(identity, screen) {
  return SCREEN_RULES[screen](accessFacts(identity));
}

/** The screens a session can open first, in order; the own second-factor page is everyone's. */
const HOMES = [['phoneNumbers', '/numbers'], ['callRecords', '/calls'], ['apiKeys', '/api-keys']];

/** Where `/` leads this identity: its first visible screen. */
export function homeFor(identity) {
  const found = HOMES.find(([screen]) => canSee(identity, screen));
  return found ? found[1] : '/account/second-factor';
}
