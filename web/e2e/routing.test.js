/**
 * Carriers, gateways and least-cost routing in chromium against the real `sbc api` (driven by
 * tests/console/test_console_routing_browser.py, which provisions the tenant, its carriers and
 * plan, and marks one gateway down in the live health store). Every screen: axe-core reports no
 * violation, and a 1280×800 screenshot is kept.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, launch, screenshot, signIn, withPageOf } from './browser.js';
import { startBus } from './bus.js';

const R = SETUP.routing;
let browser;

before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const withPage = (fn) => withPageOf(browser, fn);

/** The API as the page sees it (same origin, the page's own token). */
function api(page, path) {
  return page.evaluate(async (p) => {
    const response = await fetch(p, { headers: { Authorization: `Bearer ${localStorage.getItem('admin_auth_token')}` } });
    return response.json();
  }, path);
}

function gatewayRow(page, address) {
  return page.getByRole('row').filter({ has: page.getByRole('cell', { name: address, exact: true }) });
}

test('Carriers: the list, a refused tech prefix beside its field, then the new carrier\'s page', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/carriers');
  await page.getByRole('heading', { name: 'Carriers', exact: true }).waitFor();
  await page.getByRole('link', { name: 'Acme Telecom' }).waitFor();
  const acme = page.getByRole('row').filter({ hasText: 'Acme Telecom' });
  assert.deepEqual(await acme.getByRole('cell').allInnerTexts(), ['Acme Telecom', '77#', 'No', 'Active', 'Yours']);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'carriers');

  await page.getByLabel('Name').fill('Carrier Three');
  await page.getByLabel('Tech prefix').fill('12a');
  await page.getByRole('button', { name: 'Add carrier' }).click();
  const prefix = page.getByLabel('Tech prefix');
  await page.getByText('Digits, # and * only (0-32).').waitFor();
  assert.equal(await prefix.getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Name').inputValue(), 'Carrier Three', 'what was typed stays');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'carrier-refused-prefix');
  await prefix.fill('12#');
  await page.getByLabel('Dial the number with a leading +').check();
  await page.getByRole('button', { name: 'Add carrier' }).click();
  await page.getByRole('heading', { name: 'Carrier Carrier Three' }).waitFor();
  const id = page.url().split('/').pop();
  const saved = await api(page, `/api/carriers/${id}`);
  assert.equal(saved.tech_prefix, '12#');
  assert.equal(saved.e164_leading_plus, true);
  await page.getByRole('status').filter({ hasText: 'No gateways yet.' }).waitFor();
}));

test('Gateways: addresses and CIDR, live health (down, up, not probed), a refused CIDR beside Prefix length, an edit', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, `/carriers/${R.acme.id}`);
  await page.getByRole('heading', { name: 'Carrier Acme Telecom' }).waitFor();
  const down = gatewayRow(page, '203.0.113.10/32');
  await down.waitFor();
  assert.deepEqual(await down.getByRole('cell').allInnerTexts(),
    ['203.0.113.10/32', '5060', 'UDP', 'In and out', 'Active', 'Down: routing skips it', '—', 'Edit']);
  assert.equal(await gatewayRow(page, '198.51.100.0/24').getByRole('cell').nth(5).innerText(), 'Not probed');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'carrier-gateways');

  const add = page.getByRole('region', { name: 'Add a gateway' });
  await add.getByLabel('IPv4 address').fill('192.0.2.0');
  await add.getByLabel('Prefix length').fill('24');
  await add.getByRole('button', { name: 'Add gateway' }).click();
  await add.getByText('An outbound gateway is one host: netmask must be 32.').waitFor();
  assert.equal(await add.getByLabel('Prefix length').getAttribute('aria-invalid'), 'true');
  assert.equal(await add.getByLabel('IPv4 address').inputValue(), '192.0.2.0', 'what was typed stays');
  assert.deepEqual(await axeViolations(page), []);
  await add.getByRole('heading').evaluate((el) => el.scrollIntoView());
  await screenshot(page, 'gateway-refused-cidr');
  // an outbound gateway is one host: the same network as inbound only is accepted
  await add.getByLabel('Outbound (calls are sent to it)').uncheck();
  await add.getByRole('button', { name: 'Add gateway' }).click();
  const network = gatewayRow(page, '192.0.2.0/24');
  await network.waitFor();
  assert.equal(await network.getByRole('cell').nth(3).innerText(), 'Inbound');
  assert.equal(await network.getByRole('cell').nth(5).innerText(), 'Not probed');

  await page.getByRole('button', { name: 'Edit gateway 203.0.113.10/32' }).click();
  const edit = page.getByRole('region', { name: 'Edit gateway 203.0.113.10/32' });
  await edit.getByLabel('Port', { exact: true }).fill('5070');
  await edit.getByLabel('Transport').selectOption('tcp');
  await edit.getByLabel('Registration username').fill('trunk-user');
  await edit.getByLabel('Registration password').fill('reg-secret-1');
  await edit.getByRole('button', { name: 'Save gateway' }).click();
  await edit.waitFor({ state: 'detached' });
  const edited = gatewayRow(page, '203.0.113.10/32');
  await edited.getByRole('cell', { name: '5070' }).waitFor();
  assert.deepEqual(await edited.getByRole('cell').allInnerTexts(),
    ['203.0.113.10/32', '5070', 'TCP', 'In and out', 'Active', 'Down: routing skips it', 'trunk-user (not registering)', 'Edit']);
  const stored = await api(page, `/api/gateways/${R.acmeOut.id}`);
  assert.equal(stored.has_register_password, true);
  assert.equal(stored.transport, 'tcp');

  await page.goto(page.url().replace(R.acme.id, R.backup.id));
  assert.equal(await gatewayRow(page, '203.0.113.20/32').getByRole('cell').nth(5).innerText(), 'Up');

  // pushed: the controller's events for this gateway change the row without a reload
  await page.getByText(/changes are pushed as the switch reports them/u).waitFor();
  await page.evaluate(() => { window.stillThisPage = true; });
  const bus = startBus(SETUP);
  try {
    const gateway = { gatewayId: R.backupOut.id, carrierId: R.backup.id, address: '203.0.113.20:5080',
      gateway: 'gw', sipStatus: '408', phrase: 'Request Timeout', pingMs: null, at: new Date().toISOString() };
    await bus.send({ action: 'emit', account: null, type: 'system.gateway.down', payload: { ...gateway, state: 'down' } });
    const row = gatewayRow(page, '203.0.113.20/32');
    await row.getByRole('cell', { name: 'Down: routing skips it' }).waitFor({ timeout: 10000 });
    await bus.send({ action: 'emit', account: null, type: 'system.gateway.up', payload: { ...gateway, state: 'up' } });
    await row.getByRole('cell', { name: 'Up', exact: true }).waitFor({ timeout: 10000 });
    assert.equal(await page.evaluate(() => window.stillThisPage), true, 'no reload');
    assert.deepEqual(await axeViolations(page), []);
  } finally {
    bus.stop();
  }
}));

async function explain(page, number) {
  await page.getByLabel('Number to explain').fill(number);
  await page.getByRole('button', { name: 'Explain' }).click();
}

test('Explain this number: the plan, the route, the carriers in try order and the down gateway skipped', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/lcr');
  await page.getByRole('heading', { name: 'Least-cost routing' }).waitFor();
  await page.getByRole('link', { name: 'Main plan' }).waitFor();
  await explain(page, '+4415551234');
  const tried = page.getByRole('table', { name: 'Tried in this order' });
  await tried.waitFor();
  assert.equal(await page.locator('.explain dd').nth(1).innerText(), 'Main plan (your plan)');
  assert.equal(await page.locator('.explain dd').nth(2).innerText(), '^44');
  const rows = tried.getByRole('row');
  assert.equal(await rows.count(), 2, 'a header and one attempt: the down gateway is skipped');
  const attempt = await rows.nth(1).getByRole('cell').allInnerTexts();
  assert.deepEqual(attempt.slice(0, 3), ['1', 'Backup Carrier', '203.0.113.20:5080']);
  // Backup dials E.164 with a leading +; the down Acme gateway is not tried
  assert.match(attempt[3], /^sofia\/gateway\/\S+\/\+4415551234$/);
  const skipped = page.getByRole('table', { name: 'Skipped' });
  assert.match(await skipped.innerText(), /gateway of Acme Telecom is down \(OPTIONS ping\)/);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'lcr-explain');

  await explain(page, '+81312345678');
  await page.locator('.explain').getByText('None').first().waitFor();
  assert.equal(await page.locator('.explain dd').nth(1).innerText(), 'None');
}));

function routeOrder(page) {
  return page.locator('ol.routes > li code').allInnerTexts();
}

test('LCR routes: a refused pattern beside Pattern; reorder by dragging and by keyboard, and the explanation follows', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, `/lcr/${R.plan.id}`);
  await page.getByRole('heading', { name: 'LCR plan Main plan' }).waitFor();
  await page.locator('ol.routes > li').nth(2).waitFor();
  assert.deepEqual(await routeOrder(page), ['^44', '^1', '^4']);
  const uk = page.locator('ol.routes > li').first();
  await uk.getByRole('cell', { name: 'Backup Carrier', exact: true }).waitFor();
  assert.deepEqual(await axeViolations(page), []);

  const add = page.getByRole('region', { name: 'Add a route' });
  await add.getByLabel('Pattern').fill('^(?=49)');
  await add.getByRole('button', { name: 'Add route' }).click();
  await add.getByText('not supported by the linear-time matcher', { exact: false }).waitFor();
  assert.equal(await add.getByLabel('Pattern').getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'lcr-refused-pattern');

  // a carrier already in the set: said beside Carrier
  const set = uk.getByRole('form', { name: 'Add a carrier to route ^44' });
  await set.getByLabel('Carrier', { exact: true }).selectOption({ label: 'Backup Carrier' });
  await set.getByRole('button', { name: 'Add carrier' }).click();
  await set.getByText('This carrier is already in the route\'s carrier set.').waitFor();

  // drag "^4" (last) onto the first route: it becomes the first the router tries
  const europe = page.locator('ol.routes > li').filter({ has: page.locator('code', { hasText: /^\^4$/ }) });
  await europe.dragTo(uk);
  await page.getByRole('status').filter({ hasText: 'Route ^4 moved to position 1 of 3.' }).waitFor();
  assert.deepEqual(await routeOrder(page), ['^4', '^44', '^1']);
  const server = await api(page, `/api/lcr/${R.plan.id}/routes`);
  assert.deepEqual(server.map((r) => [r.regex, r.priority]), [['^4', 10], ['^44', 20], ['^1', 30]]);
  const afterDrag = await api(page, '/api/lcr/explain?number=4415551234');
  assert.equal(afterDrag.route.regex, '^4');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'lcr-routes');

  // the keyboard: focus "Move down" on ^4 and press it twice (Enter, then Space); the focus
  // follows the moved route, and lands on its Move up once Move down is disabled at the end
  const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
  await page.getByRole('button', { name: 'Move down: route ^4', exact: true }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('status').filter({ hasText: 'Route ^4 moved to position 2 of 3.' }).waitFor();
  assert.equal(await focused(), 'Move down: route ^4');
  await page.keyboard.press('Space');
  await page.getByRole('status').filter({ hasText: 'Route ^4 moved to position 3 of 3.' }).waitFor();
  assert.deepEqual(await routeOrder(page), ['^44', '^1', '^4']);
  assert.equal(await page.getByRole('button', { name: 'Move down: route ^4', exact: true }).isDisabled(), true);
  assert.equal(await focused(), 'Move up: route ^4');
  assert.deepEqual(await axeViolations(page), []);

  await page.getByRole('link', { name: 'Least-cost routing', exact: true }).first().click();
  await explain(page, '4415551234');
  await page.getByRole('table', { name: 'Tried in this order' }).waitFor();
  assert.equal(await page.locator('.explain dd').nth(2).innerText(), '^44');
}));
