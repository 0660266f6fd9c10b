/**
 * The scopes of docs/api.md "API keys as credentials": `<scope>` grants every method,
 * `<scope>:read` only GET/HEAD (call control is one action, so it has no read level).
 */
export const SCOPES = [
  { name: 'account', label: 'Account' },
  { name: 'calls', label: 'Calls' },
  { name: 'call_control', label: 'Call control' },
  { name: 'recordings', label: 'Recordings and call records' },
  { name: 'applications', label: 'Applications' },
  { name: 'phone_numbers', label: 'Phone numbers' },
  { name: 'call_flows', label: 'Call flows' },
  { name: 'carriers', label: 'Carriers and gateways' },
  { name: 'lcr', label: 'Least-cost routing' },
  { name: 'sip_targets', label: 'SIP dial targets' },
  { name: 'queues', label: 'Queues' },
  { name: 'users', label: 'Users' },
  { name: 'agents', label: 'Agents' },
  { name: 'campaigns', label: 'Campaigns' },
];

/** The create body's `scopes` from the form's choices (`scope:<name>`: '', 'read', 'write'). */
export function scopesFromChoices(values) {
  const scopes = [];
  for (const { name } of SCOPES) {
    const level = values[`scope:${name}`];
    if (level === 'write') scopes.push(name);
    else if (level === 'read') scopes.push(`${name}:read`);
  }
  return scopes;
}

/** A `datetime-local` value (the browser's local time) as an ISO instant with offset, or null. */
export function expiresAtIso(local) {
  if (!local) return null;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}
