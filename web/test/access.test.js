import { describe, expect, test } from 'vitest';
import { canSee, homeFor } from '../src/access.js';
import { expiresAtIso, scopesFromChoices } from '../src/screens/apiKeys.js';

const identity = (role, permissions, licenses) => ({ user: { role, permissions }, account: { licenses } });
const ADMIN = identity('admin', ['api_keys.create', 'api_keys.delete', 'recordings.view'], ['api-access']);
const SUPERVISOR = identity('supervisor', [], ['api-access', 'queue-mgmt']);
const LICENSELESS_SUPERVISOR = identity('supervisor', ['recordings.view'], ['queue-mgmt']);

describe('screens shown by role, permission and license', () => {
  test.each([
    ['phoneNumbers', ADMIN, true], ['phoneNumbers', SUPERVISOR, false],
    ['users', ADMIN, true], ['users', SUPERVISOR, false],
    ['apiKeys', SUPERVISOR, true], ['apiKeys', LICENSELESS_SUPERVISOR, false],
    ['callRecords', SUPERVISOR, false], ['callRecords', LICENSELESS_SUPERVISOR, true],
    ['liveView', SUPERVISOR, true], ['liveView', ADMIN, false], ['queues', SUPERVISOR, false],
    ['carriers', ADMIN, true], ['carriers', SUPERVISOR, false],
    ['callbacks', SUPERVISOR, true], ['callbacks', LICENSELESS_SUPERVISOR, true],
    ['callbacks', identity('admin', [], ['queue-mgmt']), true], ['callbacks', ADMIN, false],
    ['callbacks', identity('agent', [], ['queue-mgmt']), false],
    ['callbacks', identity('supervisor', [], ['api-access']), false],
  ])('%s for %o is %s', (screen, who, shown) => {
    expect(canSee(who, screen)).toBe(shown);
  });

  test('/ leads to the first screen the session is shown, else the own second-factor page', () => {
    expect(homeFor(ADMIN)).toBe('/numbers');
    expect(homeFor(LICENSELESS_SUPERVISOR)).toBe('/calls');
    expect(homeFor(SUPERVISOR)).toBe('/api-keys');
    expect(homeFor(identity('supervisor', [], []))).toBe('/account/second-factor');
    expect(homeFor(null)).toBe('/account/second-factor');
  });
});

describe('the API key create body', () => {
  test('each scope\'s level: read-only is <scope>:read, read and write is <scope>, no access is absent', () => {
    expect(scopesFromChoices({ 'scope:phone_numbers': 'read', 'scope:calls': 'write', 'scope:users': '' }))
      .toEqual(['calls', 'phone_numbers:read']);
    expect(scopesFromChoices({})).toEqual([]);
  });

  test('the expiry typed in local time is sent as a UTC instant; empty is no expiry', () => {
    expect(expiresAtIso('2030-06-30T17:00')).toBe(new Date(2030, 5, 30, 17, 0).toISOString());
    expect(expiresAtIso('')).toBeNull();
  });
});
