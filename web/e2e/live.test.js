/**
 * The live view and the Queues screens in chromium against the real `sbc api` (driven by
 * tests/console/test_console_live_browser.py, which provisions two tenants that each have a
 * queue named Sales). Bus events are published through the product's outbox publisher
 * (e2e/bus.js). Every screen: axe-core reports no violation, and a screenshot is kept.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, consoleUrl, launch, screenshot, signIn, withPageOf } from './browser.js';
import { WAITING_IS, startBus, watchFor } from './bus.js';

const LIVE = SETUP.live;
const OTHER = SETUP.other;
let browser;
let bus;

before(async () => {
  browser = await launch();
  bus = startBus(SETUP);
});
after(async () => {
  await browser?.close();
  await bus?.stop();
});

const withPage = (fn) => withPageOf(browser, fn);

function waitingCell(page) {
  return page.locator('tr[data-queue="Sales"] td').first();
}

test('the live view: a caller queued appears without a reload; the other tenant\'s callers and events never do', () => withPage(async (page) => {
  let navigations = 0;
  page.on('framenavigated', (frame) => { if (frame === page.mainFrame()) navigations += 1; });
  await signIn(page, LIVE.subdomain, '/live');
  await page.getByRole('heading', { name: 'Live view' }).waitFor();
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  assert.equal(await waitingCell(page).textContent(), '0');
  const loadsBefore = navigations;

  // the other tenant first: two callers in its own "Sales" line, its queue.metrics, a call
  for (let n = 0; n < 2; n += 1) {
    await bus.send({ action: 'enqueue', account: OTHER.account, queue: 'Sales', callId: randomUUID() });
  }
  await bus.send({ action: 'emit', account: OTHER.account, type: 'queue.metrics', payload: {
    accountSid: OTHER.account, queueId: OTHER.queue.id, queue: 'Sales', strategy: 'longest_idle', waiting: 99,
    longestWaitSeconds: 999, agents: { available: 9, not_ready: 0, wrap_up: 0, offline: 0 }, agentsEngaged: 0,
    serviceLevel: { targetSeconds: 20, windowSeconds: 900, answered: 0, withinTarget: 0, percent: null }, periodSeconds: 30 } });
  await bus.send({ action: 'emit', account: OTHER.account, type: 'call.started', payload: {
    callId: randomUUID(), direction: 'inbound', from: '15559990000', to: '15559990001', at: new Date().toISOString() } });

  // then ours: one caller
  await watchFor(page, WAITING_IS, { queue: 'Sales', waiting: 1 });
  const sent = await bus.send({ action: 'enqueue', account: LIVE.account, queue: 'Sales', callId: randomUUID() });
  const seenAt = await page.evaluate(() => window.__seen);
  assert.equal(await waitingCell(page).textContent(), '1', 'our one caller, not the other tenant\'s two');
  assert.ok(seenAt - sent.emittedAt < 5000, `on screen ${seenAt - sent.emittedAt} ms after the event`);
  const myCall = randomUUID();
  await bus.send({ action: 'emit', account: LIVE.account, type: 'call.started', payload: {
    callId: myCall, direction: 'inbound', from: '15550001111', to: '15550002222', at: new Date().toISOString() } });
  await page.getByRole('cell', { name: '15550001111' }).waitFor();

  assert.equal(navigations, loadsBefore, 'no reload: the figures were pushed');
  assert.equal(await page.locator('table.board tbody tr').count(), 1, 'only our queue');
  const text = await page.locator('main').innerText();
  assert.ok(!text.includes('15559990000'), 'the other tenant\'s call is not shown');
  assert.ok(!text.includes('99') && !text.includes('16:39'), 'the other tenant\'s figures are not shown');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'live-view');

  await bus.send({ action: 'emit', account: LIVE.account, type: 'call.ended', payload: { callId: myCall } });
  await page.getByRole('cell', { name: '15550001111' }).waitFor({ state: 'detached' });
}));

test('the stream lost: "Live updates paused — reconnecting…" with the figures greyed, then live again with the state now', () => withPage(async (page) => {
  // keep the page's EventSource at hand, to end it as a dropped connection ends it
  await page.addInitScript(() => {
    const Native = window.EventSource;
    window.__streams = [];
    window.EventSource = class extends Native {
      constructor(...args) { super(...args); window.__streams.push(this); }
    };
  });
  await signIn(page, LIVE.subdomain, '/live');
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  const status = page.getByRole('status').filter({ hasText: 'Live' });
  assert.equal(await status.getAttribute('aria-live'), 'polite');
  // the new ticket is held until the paused page has been looked at
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/api/live/tickets', async (route) => { await held; await route.continue(); });
  await page.evaluate(() => {
    const stream = window.__streams.at(-1);
    stream.close();
    stream.onerror(new Event('error'));
  });
  await page.getByText('Live updates paused — reconnecting…').waitFor();
  assert.match(await status.innerText(), /The connection to the server was lost\.[\s\S]*may be out of date\./);
  assert.equal(await page.locator('.stale table.board').count(), 1, 'the figures are marked stale');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'live-view-paused');
  release();
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  await page.unroute('**/api/live/tickets');
  assert.equal(await page.locator('.stale').count(), 0);
  assert.equal(await waitingCell(page).textContent(), '1', 'the caller queued by the first test, read again');
  assert.equal(await page.evaluate(() => window.__streams.length), 2, 'a new stream, with a new ticket');
}));

test('a page opened mid-call lists the calls already running, and not the other tenant\'s', () => withPage(async (page) => {
  await bus.send({ action: 'running', account: OTHER.account, callId: randomUUID(), direction: 'inbound', from: '15559993333', to: '15559994444' });
  const running = randomUUID();
  await bus.send({ action: 'running', account: LIVE.account, callId: running, direction: 'outbound', from: '15550003333', to: '15550004444' });
  await signIn(page, LIVE.subdomain, '/live');
  const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: '15550004444' }) });
  await row.waitFor();
  assert.match(await row.innerText(), /15550003333/);
  assert.match(await row.innerText(), /answered/i);
  assert.ok(!(await page.locator('main').innerText()).includes('15559993333'), 'the other tenant\'s call is not shown');
  await bus.send({ action: 'emit', account: LIVE.account, type: 'call.ended', payload: { callId: running } });
  await row.waitFor({ state: 'detached' });
}));

test('queues: the list, a taken name refused beside its field, a new queue with uploaded hold music, an agent added at tier 2', () => withPage(async (page) => {
  await signIn(page, LIVE.subdomain, '/queues');
  await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
  await page.getByRole('link', { name: 'Sales' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'queues');

  await page.getByLabel('Queue name').fill('Sales');
  await page.getByRole('button', { name: 'Add queue' }).click();
  const nameError = page.locator('.field', { has: page.getByLabel('Queue name') }).locator('.field-error');
  await nameError.waitFor();
  assert.equal(await page.getByLabel('Queue name').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Queue name').inputValue(), 'Sales', 'what was typed stays');

  await page.getByLabel('Queue name').fill('Support');
  await page.getByLabel('Hold music').selectOption('lobby');
  await page.getByRole('button', { name: 'Add queue' }).click();
  await page.getByRole('heading', { name: 'Queue Support' }).waitFor();
  assert.equal(await page.getByLabel('Hold music').inputValue(), 'lobby');
  await page.getByLabel('Strategy').selectOption('ring_all');
  await page.getByLabel('Service level target (seconds)').fill('30');
  await page.getByRole('button', { name: 'Save queue' }).click();
  await page.getByText('Saved.').waitFor();

  const row = page.getByRole('row', { name: /agent1/ });
  assert.match(await row.innerText(), /not ready|offline|available/);
  assert.match(await row.innerText(), /Not registered/);
  await page.getByLabel('Tier of agent1').fill('2');
  await page.getByRole('button', { name: 'Add agent1' }).click();
  await page.getByRole('button', { name: 'Remove agent1' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'queue-detail');

  await page.reload();
  await page.getByRole('button', { name: 'Remove agent1' }).waitFor();
  assert.equal(await page.getByLabel('Tier of agent1').inputValue(), '2', 'the tier was saved');
  assert.equal(await page.getByLabel('Strategy').inputValue(), 'ring_all');
}));

test('a supervisor: the live view and the Callbacks screen are theirs too; the Queues screen (administrators only) is not offered and says so when opened', () => withPage(async (page) => {
  await page.goto(consoleUrl(LIVE.subdomain, '/live'));
  await page.getByLabel('Username').fill('sup1');
  await page.getByLabel('Password').fill(SETUP.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Live view' }).waitFor();
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  assert.equal(await waitingCell(page).textContent(), '1', 'the caller queued by the first test is still waiting');
  assert.equal(await page.getByRole('link', { name: 'Queues' }).count(), 0, 'no Queues link for a supervisor');
  await page.goto(consoleUrl(LIVE.subdomain, '/queues'));
  await page.getByRole('heading', { name: 'Not available' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);

  // the Callbacks screen is theirs: the queue's callback listed, cancelled by the supervisor
  await page.getByRole('link', { name: 'Callbacks' }).click();
  await page.getByRole('heading', { name: 'Callbacks' }).waitFor();
  await page.getByLabel('Queue').selectOption({ label: 'Sales' });
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: `Cancel ${LIVE.callback}` }).click();
  await page.getByText(`The callback to ${LIVE.callback} is cancelled.`).waitFor();
  assert.deepEqual(await axeViolations(page), []);
}));
