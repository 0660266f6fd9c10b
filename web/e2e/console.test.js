/**
 * The console in chromium against the real `sbc api` (driven by tests/console/test_console_browser.py,
 * which provisions the tenants and passes them in $CONSOLE_E2E). Every screen: axe-core reports no
 * violation, and a 1280×800 screenshot is kept.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, withPage as withBrowserPage, consoleUrl, launch, screenshot, signIn, totp } from './browser.js';

const FULL = SETUP.full;
const BASIC = SETUP.basic;
let browser;

before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const withPage = (fn) => withBrowserPage(browser, fn);

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
  await page.getByRole('button', { name: 'Sign in' }).click();
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
  await page.getByRole('button', { name: 'Sign in' }).click();
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
  await page.getByRole('button', { name: 'Sign in' }).click();
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
