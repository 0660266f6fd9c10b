/**
 * The console in chromium against the real `sbc api` (driven by tests/console/test_console_browser.py,
 * which provisions the tenants and passes them in $CONSOLE_E2E). Every screen: axe-core reports no
 * violation, and a 1280×800 screenshot is kept.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, consoleUrl, launch, screenshot, signIn, totp, withPageOf } from './browser.js';

const FULL = SETUP.full;
const BASIC = SETUP.basic;
let browser;

before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const withPage = (fn) => withPageOf(browser, fn);

test('sign in with the keyboard: a wrong password is said beside the form, the right one opens Phone numbers', () => withPage(async (page) => {
  await page.goto(consoleUrl(FULL.subdomain, '/'));
  await page.waitForURL(/\/console\/login\?next=/);
  await page.getByText(`Account ${FULL.subdomain}`).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'login');
  await page.keyboard.press('Tab'); // the first control is the username field
  await page.keyboard.type('admin');
  await page.keyboard.press('Tab');
  await page.keyboard.type('not-the-password');
  await page.keyboard.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'The username or password is not right.' }).waitFor();
  assert.equal(await page.getByLabel('Username').inputValue(), 'admin', 'the username stays typed');
  await page.getByLabel('Password').fill(SETUP.password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Phone numbers' }).waitFor();
  assert.match(page.url(), /\/console\/numbers$/);
  const token = await page.evaluate(() => localStorage.getItem('admin_auth_token'));
  assert.match(token, /^ey[\w-]+\.[\w-]+\.[\w-]+$/);
  assert.equal(await page.evaluate(() => document.cookie), '', 'no cookies');
}));

test('a user with a second factor: the password step, then the authenticator code step', () => withPage(async (page) => {
  await page.goto(consoleUrl(FULL.subdomain, '/calls'));
  await page.getByLabel('Username').fill(FULL.mfa.username);
  await page.getByLabel('Password').fill(SETUP.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const code = page.getByLabel('Authentication code');
  await code.waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'login-mfa');
  await code.fill('000000');
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByText('That code is not right.', { exact: false }).waitFor();
  // the confirmation spent this 30 s step: the next step's code is within the accepted window
  await code.fill(totp(FULL.mfa.secret, Date.now() + 30000));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('heading', { name: 'Call records' }).waitFor();
  assert.match(await page.evaluate(() => localStorage.getItem('admin_auth_token')), /^ey/);
}));

test('Phone numbers: the list, a search, a refused and an accepted new number', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/numbers');
  const shared = FULL.sharedNumber.number;
  await page.getByRole('link', { name: `+${shared}` }).waitFor();
  await page.getByRole('link', { name: `+${FULL.otherNumber.number}` }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'phone-numbers');

  await page.getByLabel('Search numbers').fill(shared.slice(-6));
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(new RegExp(`number=${shared.slice(-6)}`));
  await page.getByRole('link', { name: `+${FULL.otherNumber.number}` }).waitFor({ state: 'detached' });
  assert.equal(await page.getByRole('table').getByRole('link').count(), 1);

  await page.getByLabel('Number', { exact: true }).fill(FULL.otherNumber.number);
  await page.getByRole('button', { name: 'Add number' }).click();
  await page.getByText('This number is already in use.').waitFor();
  assert.equal(await page.getByLabel('Number', { exact: true }).getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Number', { exact: true }).fill('12-ab');
  await page.getByRole('button', { name: 'Add number' }).click();
  await page.getByText('Digits only, optionally with a leading +.').waitFor();
  const fresh = `1555${Date.now().toString().slice(-7)}`;
  await page.getByLabel('Number', { exact: true }).fill(`+${fresh}`);
  await page.getByRole('button', { name: 'Add number' }).click();
  await page.getByRole('heading', { name: `+${fresh}` }).waitFor();
}));

test('Answering: webhook on a shared number — refusal beside the URL, nothing typed lost, then Webhook — <number> with the secret shown by its last four', () => withPage(async (page) => {
  const number = FULL.sharedNumber;
  await signIn(page, FULL.subdomain, `/numbers/${number.id}`);
  await page.getByRole('heading', { name: `+${number.number}` }).waitFor();
  await page.getByRole('group', { name: 'Answering mode' }).waitFor();
  assert.equal(await page.getByLabel('Call flow', { exact: true }).first().isChecked(), true);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'answering-call-flow');

  await page.getByLabel('Your server (webhook)').check();
  assert.equal(await page.getByLabel('Method').inputValue(), 'POST', 'Method defaults to POST');
  await page.getByLabel('Webhook URL').fill('http://8.8.8.8/hook');
  await page.getByLabel('Signing secret', { exact: true }).fill('whsec-0123456789abcd');
  await page.getByRole('button', { name: 'Save' }).click();
  const urlError = page.locator('.field-error');
  await urlError.waitFor();
  assert.match(await urlError.innerText(), /https/);
  assert.equal(await page.getByLabel('Webhook URL').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Webhook URL').inputValue(), 'http://8.8.8.8/hook', 'the typed URL stays');
  assert.equal(await page.getByLabel('Signing secret', { exact: true }).inputValue(), 'whsec-0123456789abcd', 'the typed secret stays');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'answering-refused-url');

  await page.getByLabel('Webhook URL').fill('https://8.8.8.8/hook');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: `Webhook — ${number.number}` }).waitFor();
  await page.getByText(`Webhook — ${number.number}`, { exact: true }).waitFor(); // the Application fact
  await page.getByText('A secret is saved, ending in abcd.').waitFor();
  assert.equal(await page.getByLabel('Signing secret', { exact: true }).inputValue(), '', 'the secret is write-only');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'answering-webhook');

  // back to the call flow: the flow used before is offered again
  await page.getByLabel('Call flow', { exact: true }).first().check();
  assert.equal(await page.getByRole('combobox', { name: 'Call flow' }).inputValue(), FULL.flow.id);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
}));

test('keyboard: the answering settings are reached and changed without a mouse; axe does catch a missing label', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, `/numbers/${FULL.otherNumber.id}`);
  await page.getByRole('heading', { name: `+${FULL.otherNumber.number}` }).waitFor();
  await page.keyboard.press('Tab'); // the skip link first
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content');
  let steps = 0;
  while (await page.evaluate(() => document.activeElement.name) !== 'mode' && steps < 20) {
    await page.keyboard.press('Tab');
    steps += 1;
  }
  assert.equal(await page.evaluate(() => document.activeElement.value), 'call_flow');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.getByLabel('Your server (webhook)').isChecked(), true);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.name), 'url');
  await page.keyboard.type('https://8.8.8.8/by-keyboard');
  assert.equal(await page.getByLabel('Webhook URL').inputValue(), 'https://8.8.8.8/by-keyboard');
  // the accessibility check is not vacuous: an unlabelled field is reported
  await page.evaluate(() => document.querySelector('form').append(document.createElement('input')));
  assert.ok((await axeViolations(page)).some((v) => v.startsWith('label:')));
}));

test('keyboard: Tab reaches every link of the main navigation in order, and Enter on each opens its screen', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/account');
  const nav = page.getByRole('navigation', { name: 'Screens' });
  await nav.waitFor();
  const links = await nav.getByRole('link').evaluateAll((els) => els.map((a) => ({ name: a.textContent, path: new URL(a.href).pathname })));
  assert.deepEqual(links.map((l) => l.name), ['Phone numbers', 'Call records', 'API keys', 'Users', 'Carriers',
    'Least-cost routing', 'Live view', 'Queues', 'Callbacks', 'Applications', 'Call flows', 'Campaigns']);
  await page.keyboard.press('Tab'); // the skip link first
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content');
  for (const link of links) {
    await page.keyboard.press('Tab');
    assert.deepEqual(await page.evaluate(() => ({ name: document.activeElement.textContent,
      inNav: Boolean(document.activeElement.closest('nav[aria-label="Screens"]')) })), { name: link.name, inNav: true });
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === link.path);
    await nav.locator('a[aria-current="page"]').filter({ hasText: link.name }).waitFor();
    const heading = page.getByRole('heading', { level: 1 }).first();
    await heading.waitFor();
    assert.notEqual(await heading.textContent(), 'Not available', link.name);
  }
}));

test('Answering without programmable-voice: only the call-flow field is offered', () => withPage(async (page) => {
  await signIn(page, BASIC.subdomain, `/numbers/${BASIC.number.id}`);
  await page.getByRole('heading', { name: `+${BASIC.number.number}` }).waitFor();
  await page.getByRole('combobox', { name: 'Call flow' }).waitFor();
  assert.equal(await page.getByText('Answering mode').count(), 0);
  assert.equal(await page.getByText('Your server (webhook)').count(), 0);
  assert.deepEqual(await axeViolations(page), []);
}));

test('an ended session (at start, or mid-session on an API call) returns to login, then to the page the user was on', () => withPage(async (page) => {
  const route = `/numbers/${FULL.otherNumber.id}`;
  await page.goto(consoleUrl(FULL.subdomain, '/login'));
  await page.evaluate(() => localStorage.setItem('admin_auth_token', 'eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9.x'));
  await page.goto(consoleUrl(FULL.subdomain, route));
  await page.waitForURL(/\/console\/login\?next=/);
  await page.getByText('Your session has ended. Sign in again.').waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem('admin_auth_token')), null);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(SETUP.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: `+${FULL.otherNumber.number}` }).waitFor();
  assert.ok(page.url().endsWith(`/console${route}`));

  // mid-session: the server ends the session (as "sign out everywhere" would) while the user
  // types; the save gets 401 token_revoked, the user signs in again and is back on the page
  // with what they typed
  await page.evaluate(async () => {
    await fetch('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${localStorage.getItem('admin_auth_token')}` } });
  });
  await page.getByLabel('Your server (webhook)').check();
  await page.getByLabel('Webhook URL').fill('https://8.8.8.8/typed-before-expiry');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.waitForURL(/\/console\/login\?next=/);
  await page.getByText('Your session has ended. Sign in again.').waitFor();
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(SETUP.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: `+${FULL.otherNumber.number}` }).waitFor();
  assert.equal(await page.getByLabel('Your server (webhook)').isChecked(), true);
  assert.equal(await page.getByLabel('Webhook URL').inputValue(), 'https://8.8.8.8/typed-before-expiry');
}));

test('Sign out clears the token and the server refuses it from then on', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/numbers');
  await page.getByRole('heading', { name: 'Phone numbers' }).waitFor();
  const token = await page.evaluate(() => localStorage.getItem('admin_auth_token'));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem('admin_auth_token')), null);
  const answer = await page.evaluate(async (t) => {
    const r = await fetch('/api/phone-numbers', { headers: { Authorization: `Bearer ${t}` } });
    return { status: r.status, code: (await r.json()).code };
  }, token);
  assert.deepEqual(answer, { status: 401, code: 'token_revoked' });
}));

test('a lost network or a 500 shows a banner with Retry, and Retry loads the screen', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/numbers');
  await page.getByRole('heading', { name: 'Phone numbers' }).waitFor();
  await page.route('**/api/phone-numbers?*', (route) => route.abort('internetdisconnected'));
  await page.getByLabel('Search numbers').fill(FULL.sharedNumber.number);
  await page.getByRole('button', { name: 'Search' }).click();
  const banner = page.getByRole('alert').filter({ hasText: 'The server could not be reached.' });
  await banner.waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'outage-banner');
  await page.unroute('**/api/phone-numbers?*');
  await page.route('**/api/phone-numbers?*', (route) => route.fulfill({
    status: 500, contentType: 'application/json',
    body: JSON.stringify({ code: 'internal_error', message: 'Internal error. It has been logged.' }) }));
  await banner.getByRole('button', { name: 'Retry' }).click();
  await page.getByRole('alert').filter({ hasText: 'The server failed to do this.' }).waitFor();
  await page.unroute('**/api/phone-numbers?*');
  await page.getByRole('alert').getByRole('button', { name: 'Retry' }).click();
  await page.getByRole('link', { name: `+${FULL.sharedNumber.number}` }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
}));

test('Call records: cursor pages, filters, and a record with its summary, recording and transcript', () => withPage(async (page) => {
  const calls = FULL.calls;
  await signIn(page, FULL.subdomain, '/calls');
  await page.getByRole('heading', { name: 'Call records' }).waitFor();
  const rows = page.locator('table tbody tr');
  await page.getByRole('button', { name: 'Load more' }).waitFor();
  assert.equal(await rows.count(), 50);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'call-records');
  await page.getByRole('button', { name: 'Load more' }).click();
  await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
  assert.equal(await rows.count(), calls.records);

  await page.getByLabel('Call ID').fill('not-a-uuid');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('Not a valid UUID.').waitFor();
  assert.equal(await page.getByLabel('Call ID').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Call ID').fill('');
  await page.getByLabel('Direction').selectOption('outbound');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/direction=outbound/);
  await page.getByText('Not a valid UUID.').waitFor({ state: 'detached' });
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);

  await rows.first().getByRole('link').click();
  await page.waitForURL(new RegExp(`/console/calls/${calls.recorded}$`));
  await page.getByRole('heading', { name: 'Transcript' }).waitFor();
  await page.getByText('This is terrible.').waitFor();
  await page.getByText('negative (-1.00)').waitFor();
  const audio = page.locator('audio');
  await audio.waitFor();
  const duration = await audio.evaluate((el) => new Promise((resolve) => {
    if (el.readyState >= 1 && el.src) resolve(el.duration);
    el.addEventListener('loadedmetadata', () => resolve(el.duration), { once: true });
  }));
  assert.ok(Math.abs(duration - calls.recordingSeconds) < 0.05, `recording plays ${duration} s`);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'call-record');
}));

test('single sign-on: "Sign in with Example IdP", the real provider\'s pages, the console\'s callback page, back to the page asked for', () => withPage(async (page) => {
  const sso = FULL.sso;
  await page.goto(consoleUrl(BASIC.subdomain, '/login'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  assert.equal(await page.getByRole('button', { name: /^Sign in with/ }).count(), 0, 'no single sign-on: no button');

  await page.goto(consoleUrl(FULL.subdomain, '/calls'));
  const button = page.getByRole('button', { name: `Sign in with ${sso.displayName}` });
  await button.waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'login-sso');
  await button.click();
  await page.waitForURL((url) => url.href.startsWith(`${sso.issuer}/interaction/`));
  await page.fill('input[name="login"]', sso.login);
  await page.fill('input[name="password"]', 'any password');
  await page.click('button[type="submit"]');
  const callback = page.waitForResponse((r) => r.url().endsWith('/auth/sso/callback') && r.request().method() === 'POST');
  await page.click('button:has-text("Continue")');
  const answered = await callback;
  assert.equal(answered.status(), 200);
  await page.getByRole('heading', { name: 'Call records' }).waitFor();
  assert.ok(page.url().endsWith('/console/calls'), `the page asked for, without the code: ${page.url()}`);
  const token = await page.evaluate(() => localStorage.getItem('admin_auth_token'));
  const me = await page.evaluate(async (t) => (await fetch('/auth/refresh', { method: 'POST', headers: { Authorization: `Bearer ${t}` } })).json(), token);
  assert.equal(me.user.username, sso.login);
  assert.equal(me.user.role, 'admin', 'the provider\'s group sbc-admins');
  // the state is single use: the same code and state again are refused
  const replay = await page.evaluate(async (body) => {
    const r = await fetch('/auth/sso/callback', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    return { status: r.status, code: (await r.json()).code };
  }, answered.request().postData());
  assert.deepEqual(replay, { status: 400, code: 'sso_state_invalid' });
}));

test('an account that requires a second factor: sign-in becomes the set-up (QR, a code, recovery codes shown once), then the session', () => withPage(async (page) => {
  const strict = SETUP.strict;
  await signIn(page, strict.subdomain, '/', strict.username);
  await page.getByRole('heading', { name: 'Second factor required' }).waitFor();
  await page.getByRole('button', { name: 'Start' }).click();
  const qr = page.getByRole('img', { name: 'QR code of the authenticator set-up' });
  await qr.waitFor();
  assert.match(await qr.getAttribute('src'), /^data:image\/svg\+xml/);
  const secret = (await page.locator('dt:has-text("Secret key") + dd').innerText()).trim();
  assert.match(await page.locator('dt:has-text("Set-up address") + dd').innerText(), new RegExp(`^otpauth://totp/.*secret=${secret}`));
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'mfa-enrolment');
  await page.getByLabel('Authentication code').fill(totp(secret, Date.now()));
  await page.getByRole('button', { name: 'Confirm' }).click();
  const codes = page.locator('ul.codes li');
  await page.getByRole('heading', { name: 'Recovery codes' }).waitFor();
  assert.equal(await codes.count(), 10);
  assert.match(await codes.first().innerText(), /^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
  assert.equal(await page.evaluate(() => localStorage.getItem('admin_auth_token')), null, 'no session before the codes are acknowledged');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'mfa-recovery-codes');
  await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();
  // a supervisor of an account with queue-mgmt only: the live view and callbacks, no admin screen, no API keys
  await page.getByRole('heading', { name: 'Second factor', exact: true }).waitFor();
  await page.getByText('Recovery codes left').waitFor();
  const nav = page.getByRole('navigation', { name: 'Screens' });
  assert.deepEqual(await nav.getByRole('link').allInnerTexts(), ['Live view', 'Callbacks']);
  assert.match(await page.evaluate(() => localStorage.getItem('admin_auth_token')), /^ey/);
  assert.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');
}));

test('roles shape the screens: a supervisor sees API keys without create or revoke, the live view and the callbacks, no admin screen, and the server refuses all the same', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/', FULL.supervisor);
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  const nav = page.getByRole('navigation', { name: 'Screens' });
  assert.deepEqual(await nav.getByRole('link').allInnerTexts(), ['API keys', 'Live view', 'Callbacks']);
  assert.equal(await page.getByRole('heading', { name: 'Create a key' }).count(), 0, 'no api_keys.create');
  assert.equal(await page.getByRole('button', { name: /^Revoke/ }).count(), 0, 'no api_keys.delete');
  assert.deepEqual(await axeViolations(page), []);
  for (const route of ['/users', '/numbers', '/calls', '/queues']) {
    await page.goto(consoleUrl(FULL.subdomain, route));
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
  }
  const refused = await page.evaluate(async () => {
    const r = await fetch('/api/users', { headers: { Authorization: `Bearer ${localStorage.getItem('admin_auth_token')}` } });
    return { status: r.status, code: (await r.json()).code };
  });
  assert.deepEqual(refused, { status: 403, code: 'admin_required' });
}));

test('a user\'s own second factor: Start, a wrong code beside the field, the right one, recovery codes once, then it is on', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/account/second-factor', FULL.supervisor);
  await page.getByText('No second factor yet').waitFor();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByRole('img', { name: 'QR code of the authenticator set-up' }).waitFor();
  const secret = (await page.locator('dt:has-text("Secret key") + dd').innerText()).trim();
  const code = page.getByLabel('Authentication code');
  const wrong = String((Number(totp(secret, Date.now())) + 500000) % 1000000).padStart(6, '0');
  await code.fill(wrong);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByText('That code is not right. Enter the code your authenticator app shows now for this account.').waitFor();
  assert.equal(await code.getAttribute('aria-invalid'), 'true');
  await code.fill(totp(secret, Date.now()));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('heading', { name: 'Recovery codes' }).waitFor();
  assert.equal(await page.locator('ul.codes li').count(), 10);
  await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();
  await page.getByText('Recovery codes left').waitFor();
  assert.equal(await page.locator('dt:has-text("Recovery codes left") + dd').innerText(), '10');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'second-factor-on');
}));

test('API keys: scopes and expiry, the key shown once and working within its scopes, a refused expiry beside its field, revoke', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/api-keys');
  await page.getByRole('heading', { name: 'Create a key' }).waitFor();
  await page.getByLabel('Name').fill('CRM sync');
  await page.getByLabel('Phone numbers').selectOption('read');
  await page.getByLabel('Calls', { exact: true }).selectOption('write');
  await page.getByLabel('Expires').fill('2001-01-01T10:00');
  await page.getByRole('button', { name: 'Create key' }).click();
  const expiresError = page.locator('.field-error');
  await expiresError.waitFor();
  assert.equal(await page.getByLabel('Expires').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Name').inputValue(), 'CRM sync', 'nothing typed is lost');
  const nextYear = new Date().getFullYear() + 1;
  await page.getByLabel('Expires').fill(`${nextYear}-06-30T17:00`);
  await page.getByRole('button', { name: 'Create key' }).click();
  const keyField = page.getByLabel('Key', { exact: true });
  await keyField.waitFor();
  const key = await keyField.inputValue();
  assert.match(key, /^sk_[\w-]{43}$/);
  const row = page.locator('tr', { hasText: 'CRM sync' });
  await row.waitFor();
  assert.equal(await row.locator('td').nth(2).innerText(), 'calls, phone_numbers:read');
  assert.match(await row.locator('td').nth(3).innerText(), new RegExp(String(nextYear)));
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'api-keys-created');

  const use = (path) => page.evaluate(async ([p, k]) => {
    const r = await fetch(p, { headers: { 'X-API-Key': k } });
    return { status: r.status, code: r.ok ? null : (await r.json()).code };
  }, [path, key]);
  assert.deepEqual(await use('/api/phone-numbers'), { status: 200, code: null });
  assert.deepEqual(await use('/api/call-records'), { status: 403, code: 'scope_required' });

  await page.getByRole('button', { name: 'I have copied the key' }).click();
  await page.reload();
  await row.waitFor();
  assert.equal(await page.getByText(key).count(), 0, 'the key is not shown again');
  assert.equal(await page.evaluate((k) => JSON.stringify({ ...localStorage, ...sessionStorage }).includes(k), key), false, 'nor stored');
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: 'Revoke CRM sync' }).click();
  await row.getByText(/^revoked/).waitFor();
  assert.deepEqual(await use('/api/phone-numbers'), { status: 401, code: 'api_key_revoked' });
}));

test('Users: the list, a refused and an accepted new user, a role change and "Sign out everywhere" that end their session, a second-factor reset', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/users');
  await page.getByRole('heading', { name: 'Users' }).waitFor();
  await page.getByRole('rowheader', { name: 'admin (you)' }).waitFor();
  assert.equal(await page.getByLabel('Role of admin').isDisabled(), true, 'no demoting yourself');
  const name = `ops-${Date.now().toString(36)}`;
  await page.getByLabel('Username').fill(name);
  await page.getByLabel('Password').fill('short');
  await page.getByLabel('Role', { exact: true }).selectOption('supervisor');
  await page.getByRole('button', { name: 'Add user' }).click();
  await page.locator('.field-error').waitFor();
  assert.equal(await page.getByLabel('Password').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Username').inputValue(), name);
  await page.getByLabel('Password').fill(SETUP.password);
  await page.getByRole('button', { name: 'Add user' }).click();
  await page.getByRole('status').filter({ hasText: `${name} was created.` }).waitFor();
  await page.getByRole('rowheader', { name }).waitFor();
  assert.equal(await page.getByLabel(`Role of ${name}`).inputValue(), 'supervisor');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'users');

  const login = () => page.evaluate(async ([u, p]) => (await (await fetch('/auth/login', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: u, password: p }) })).json()).token,
  [name, SETUP.password]);
  const refresh = (t) => page.evaluate(async (tok) => {
    const r = await fetch('/auth/refresh', { method: 'POST', headers: { Authorization: `Bearer ${tok}` } });
    return r.ok ? r.status : (await r.json()).code;
  }, t);
  let theirs = await login();
  await page.getByRole('button', { name: `Sign out everywhere: ${name}` }).click();
  await page.getByRole('status').filter({ hasText: `${name} was signed out everywhere.` }).waitFor();
  assert.equal(await refresh(theirs), 'token_revoked');

  theirs = await login();
  await page.getByLabel(`Role of ${name}`).selectOption('agent');
  await page.getByRole('status').filter({ hasText: `${name} is now agent` }).waitFor();
  assert.equal(await refresh(theirs), 'token_revoked');
  assert.equal(await page.getByLabel(`Role of ${name}`).inputValue(), 'agent');

  const lost = FULL.lostDevice.username;
  const lostRow = page.locator('tr', { has: page.getByRole('rowheader', { name: lost }) });
  assert.equal(await lostRow.locator('td').nth(1).innerText(), 'on');
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: `Reset second factor: ${lost}` }).click();
  await page.getByRole('status').filter({ hasText: `The second factor of ${lost} was reset` }).waitFor();
  await page.waitForFunction((u) => [...document.querySelectorAll('tr')].some((tr) => tr.querySelector('th')?.textContent === u
    && tr.querySelectorAll('td')[1].textContent === 'off'), lost);
}));

test('a campaign\'s page says its live figures in words: the abandon rate against its cap, agents and calls now', () => withPage(async (page) => {
  await signIn(page, FULL.subdomain, '/campaigns');
  // signIn only submits the form: the API call needs the token the login stores (a CI run sent
  // "Bearer null" and got 401 invalid_token)
  await page.waitForFunction(() => localStorage.getItem('admin_auth_token'));
  const created = await page.evaluate(async () => {
    const r = await fetch('/api/campaigns', {
      method: 'POST',
      headers: { Authorization: `Bearer ${localStorage.getItem('admin_auth_token')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `figures-${Date.now().toString(36)}`, dialer_mode: 'predictive' }),
    });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await page.goto(consoleUrl(FULL.subdomain, `/campaigns/${created.body.id}`));
  const figures = page.locator('dl[aria-label="Live figures"]');
  await figures.getByText('no live answer yet (cap 3%)').waitFor();
  await figures.getByText('0 ringing, 0 answered (machine check), 0 waiting for an agent, 0 talking').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'campaign-figures');
}));
