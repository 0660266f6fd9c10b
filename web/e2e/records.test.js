/**
 * Call records (filters, CSV export, journey, the recording streamed by a media ticket with
 * HTTP Range), the account page, the campaign screens and the live view's supervise buttons in
 * chromium against the real `sbc api` (driven by tests/console/test_console_records_browser.py,
 * which provisions the tenant). Every screen: axe-core reports no violation, and a screenshot is kept.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, launch, screenshot, signIn, withPageOf } from './browser.js';
import { startBus } from './bus.js';

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
const rows = (page) => page.locator('table tbody tr');

test('call records: number, agent and queue filters; the CSV export of the same filters; a record\'s journey; the recording streamed by ranges with a ticket, never the token; its waveform seeks', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/calls');
  await page.getByRole('heading', { name: 'Call records' }).waitFor();
  await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length === n, SETUP.records);

  await page.getByLabel('Number').fill('18005550004'); // the callee of one record only
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/number=18005550004/);
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
  await page.getByLabel('Number').fill('55%');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('Digits only, optionally with a leading +.').waitFor();
  assert.equal(await page.getByLabel('Number').getAttribute('aria-invalid'), 'true');

  await page.getByLabel('Number').fill('');
  await page.getByLabel('Agent').selectOption({ label: SETUP.agent.username });
  await page.getByLabel('Queue').selectOption({ label: 'Sales' });
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/agent_id=/);
  await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length === n, SETUP.agent.records);
  // the Agent and Queue columns name them (the API's agent_name and queue_name)
  assert.deepEqual([...new Set(await rows(page).locator('td:nth-child(5)').allInnerTexts())], [SETUP.agent.username]);
  assert.deepEqual([...new Set(await rows(page).locator('td:nth-child(6)').allInnerTexts())], ['Sales']);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'call-records-filters');

  const [download] = await Promise.all([page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export CSV' }).click()]);
  assert.match(download.suggestedFilename(), /^call-records-\d{8}T\d{6}Z\.csv$/);
  await download.saveAs(path.join(SETUP.artifacts, 'call-records-agent1.csv')); // the Python side reads it
  await page.getByText(/^Exported call-records-/).waitFor();

  // the recorded call: its journey, and its audio
  const media = [];
  page.on('response', async (response) => {
    if (!response.url().includes('/stream?ticket=')) return;
    const headers = await response.request().allHeaders();
    media.push({ status: response.status(), range: headers.range, auth: headers.authorization,
      contentRange: response.headers()['content-range'] });
  });
  await page.goto(page.url().replace(/\/calls\?.*$/, `/calls/${SETUP.recording.id}`));
  const journey = page.getByRole('list', { name: 'The call\'s path, in order' });
  await journey.waitFor();
  assert.deepEqual(await journey.locator('li').allInnerTexts(), ['ivr', 'queue Sales', 'agent agent1']);
  const audio = page.locator('audio');
  const duration = await audio.evaluate((el) => new Promise((resolve) => {
    if (el.readyState >= 1 && el.src) resolve(el.duration);
    el.addEventListener('loadedmetadata', () => resolve(el.duration), { once: true });
  }));
  assert.ok(Math.abs(duration - SETUP.recording.seconds) < 0.05, `recording plays ${duration} s`);
  // its waveform (GET …/peaks): 200 bars of the tone at 0.3 of full scale; a click halfway seeks to 3 s
  const waveform = page.getByRole('slider', { name: /^Seek in the recording of/ });
  await waveform.waitFor();
  const heights = await waveform.locator('rect').evaluateAll((bars) => bars.map((b) => Number(b.getAttribute('height'))));
  assert.equal(heights.length, 200);
  assert.ok(heights.every((h) => h >= 29 && h <= 31), `peaks of a 0.3 tone: ${heights}`);
  const box = await waveform.boundingBox();
  await waveform.click({ position: { x: box.width / 2, y: box.height / 2 } });
  const at = await audio.evaluate((el) => el.currentTime);
  assert.ok(Math.abs(at - SETUP.recording.seconds / 2) < 0.1, `the click on the waveform seeks to ${at} s`);
  const src = await audio.getAttribute('src');
  const token = await page.evaluate(() => localStorage.getItem('admin_auth_token'));
  assert.match(src, /^\/api\/recordings\/[0-9a-f-]+\/stream\?ticket=/);
  assert.ok(!src.includes(token), 'the token is never in the player\'s URL');
  assert.ok(media.some((m) => m.status === 206 && m.range && m.contentRange?.endsWith(`/${SETUP.recording.bytes}`)),
    `the player asked by range and got 206: ${JSON.stringify(media)}`);
  assert.ok(media.every((m) => !m.auth), 'the player sent no Authorization header');
  // a seek's range, as the player would ask it: the right bytes of the file, with no credentials
  const part = await page.evaluate(async (url) => {
    const r = await fetch(url, { headers: { Range: 'bytes=1000-1099' }, credentials: 'omit' });
    return { status: r.status, length: (await r.arrayBuffer()).byteLength, contentRange: r.headers.get('content-range') };
  }, src);
  assert.deepEqual(part, { status: 206, length: 100, contentRange: `bytes 1000-1099/${SETUP.recording.bytes}` });
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'call-record-journey');
}));

test('the account: an administrator sees licenses and limits and lowers the limit; a supervisor sees them read-only', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/account');
  await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
  await page.getByText('Unlimited').waitFor();
  for (const license of ['api-access', 'queue-mgmt', 'programmable-voice']) await page.getByText(license, { exact: true }).waitFor();
  await page.getByLabel('Lower the concurrent calls limit to').fill('40');
  await page.getByRole('button', { name: 'Save limit' }).click();
  await page.getByText('40 calls at once').waitFor();
  await page.getByLabel('Lower the concurrent calls limit to').fill('80');
  await page.getByRole('button', { name: 'Save limit' }).click();
  await page.getByText(/You can only lower the limit/).waitFor();
  assert.equal(await page.getByLabel('Lower the concurrent calls limit to').getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'account-admin');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(page, SETUP.subdomain, '/account', SETUP.supervisor);
  await page.getByText(/Only an administrator signed in to the console/).waitFor();
  await page.getByText('queue-mgmt', { exact: true }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Save limit' }).count(), 0);
  assert.equal(await page.getByRole('link', { name: 'Campaigns' }).count(), 0, 'campaigns are for administrators');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'account-supervisor');
}));

test('campaigns: create, define (mode, agent groups, trunk, caller ID, window, retries), import contacts with the server\'s row errors, start, pause, resume, stop, progress', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/campaigns');
  await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
  await page.getByText('No campaigns yet.').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'campaigns');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.locator('input[aria-invalid="true"]').waitFor(); // the server's refusal beside Name
  assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Name').fill('Renewals');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Renewals' }).waitFor();
  assert.equal(await page.getByTestId('campaign-status').textContent(), 'draft');

  // starting a campaign with no trunk, caller ID or agents: the server says what is missing
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByText(/The campaign cannot dial yet/).waitFor();

  await page.getByRole('checkbox', { name: 'Sales' }).check();
  await page.getByLabel('Trunk').selectOption(SETUP.carrier.id);
  await page.getByLabel('Caller ID').selectOption(SETUP.number.number);
  await page.getByLabel('From').fill('09:00');
  await page.getByLabel('Until').fill('17:30');
  await page.getByRole('checkbox', { name: 'Sat' }).uncheck();
  await page.getByRole('checkbox', { name: 'Sun' }).uncheck();
  await page.getByLabel('busy: delay in seconds').fill('120');
  await page.getByLabel('busy: attempts at most').fill('4');
  await page.getByRole('button', { name: 'Save campaign' }).click();
  await page.getByText('Saved.').waitFor().catch(async (err) => {
    throw new Error(`not saved: ${await page.locator('main').innerText()}`, { cause: err });
  });

  // a file with bad rows: nothing imported, each bad row named by the server
  const file = page.getByLabel('Contacts file');
  await file.setInputFiles({ name: 'bad.csv', mimeType: 'text/csv',
    buffer: Buffer.from('phone_number,name\n+12125550101,Ada\nnot-a-number,Bob\n+33123456789,Marie\n12,Zed\n') });
  await page.getByRole('button', { name: 'Import contacts' }).click();
  const refused = page.locator('table.row-errors');
  await refused.waitFor();
  const refusedRows = await refused.locator('tbody tr td:first-child').allInnerTexts();
  assert.deepEqual(refusedRows, ['3', '5'], 'rows 3 and 5 of the file (the header is row 1)');
  assert.deepEqual(await axeViolations(page), []);
  await refused.scrollIntoViewIfNeeded();
  await screenshot(page, 'campaign-import-errors');
  await page.getByText('No contacts.').waitFor();

  await file.setInputFiles({ name: 'good.csv', mimeType: 'text/csv',
    buffer: Buffer.from('phone_number,name,tier\n+12125550101,Ada,gold\n+12125550102,Grace,\n+33123456789,Marie,silver\n') });
  await page.getByRole('button', { name: 'Import contacts' }).click();
  await page.getByText('Imported 3 contacts.').waitFor();
  await page.getByTestId('progress-text').getByText('0 of 3 contacts done (0%)').waitFor();
  await page.waitForFunction(() => document.querySelector('td[data-status="pending"]')?.textContent === '3');

  for (const [action, status] of [['Start', 'running'], ['Pause', 'paused'], ['Resume', 'running']]) {
    await page.getByRole('button', { name: action, exact: true }).click();
    await page.waitForFunction((s) => document.querySelector('[data-testid="campaign-status"]')?.textContent === s, status);
  }
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'campaign');
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="campaign-status"]')?.textContent === 'completed');
  await page.getByRole('link', { name: 'Campaigns' }).first().click();
  await page.getByRole('link', { name: 'Renewals' }).waitFor();
}));

test('the live view: a supervisor gets listen/whisper/barge on an answered call, and the supervision API\'s answer is shown', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/live', SETUP.supervisor);
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  const callId = randomUUID();
  const at = new Date().toISOString();
  await bus.send({ action: 'emit', account: SETUP.account, type: 'call.started', payload: {
    callId, direction: 'inbound', from: '15550003333', to: '15550004444', at } });
  await bus.send({ action: 'emit', account: SETUP.account, type: 'call.answered', payload: {
    callId, direction: 'inbound', from: '15550003333', to: '15550004444', at } });
  const group = page.getByRole('group', { name: 'Supervise the call 15550003333 to 15550004444' });
  await group.waitFor();
  for (const mode of ['Listen', 'Whisper', 'Barge']) await group.getByRole('button', { name: mode }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'live-view-supervise');
  // no switch holds this call: the real API answers 404 call_not_found, said as such
  await group.getByRole('button', { name: 'Listen' }).click();
  await group.getByText('The call has ended.').waitFor();
  assert.equal(await group.getByRole('button', { name: 'Stop' }).count(), 0);
}));

test('callbacks: the queue\'s callbacks in dispatch order, the status filter, a reschedule refused beside its field then saved, a cancel, and the API\'s 409 for one cancelled meanwhile said in words', () => withPage(async (page) => {
  const { callbacks } = SETUP;
  await signIn(page, SETUP.subdomain, '/callbacks');
  await page.getByRole('heading', { name: 'Callbacks' }).waitFor();
  await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length === n, callbacks.all);
  assert.equal(await page.getByLabel('Queue').inputValue(), SETUP.queue.id);
  // dispatch order: priority first (the dialing one has 9)
  assert.deepEqual(await rows(page).locator('td:first-child').allInnerTexts(),
    [callbacks.dialing, callbacks.later, callbacks.cancel, callbacks.gone]);
  assert.equal(await page.getByRole('button', { name: `Cancel ${callbacks.dialing}` }).count(), 0);
  await page.getByLabel('Status').selectOption('pending');
  await page.waitForURL(/status=pending/);
  await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length === n, callbacks.all - 1);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'callbacks');

  await page.getByRole('button', { name: `Reschedule ${callbacks.later}` }).click();
  const form = page.getByRole('form', { name: `Reschedule the callback to ${callbacks.later}` });
  await form.getByLabel('Not before').fill('2030-01-02T10:00');
  await form.getByLabel('Priority').fill('5000');
  await form.getByRole('button', { name: 'Save new time' }).click();
  await form.getByText(/less than or equal to 1000/).waitFor();
  assert.equal(await form.getByLabel('Priority').getAttribute('aria-invalid'), 'true');
  assert.equal(await form.getByLabel('Not before').inputValue(), '2030-01-02T10:00');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'callbacks-reschedule-refused');
  await form.getByLabel('Priority').fill('7');
  await form.getByRole('button', { name: 'Save new time' }).click();
  await page.getByText(`The callback to ${callbacks.later} is rescheduled.`).waitFor();
  assert.match(await rows(page).filter({ hasText: callbacks.later }).first().locator('td').nth(3).innerText(), /2030/);

  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: `Cancel ${callbacks.cancel}` }).click();
  await page.getByText(`The callback to ${callbacks.cancel} is cancelled.`).waitFor();
  assert.equal(await page.getByRole('button', { name: `Cancel ${callbacks.cancel}` }).count(), 0);

  // cancelled behind the page's back (another administrator): the page still offers it; the API refuses
  await page.evaluate(async ([queueId, id]) => {
    const response = await fetch(`/api/queues/${queueId}/callbacks/${id}`, { method: 'DELETE',
      headers: { Authorization: `Bearer ${localStorage.getItem('admin_auth_token')}` } });
    if (response.status !== 204) throw new Error(`cancel answered ${response.status}`);
  }, [SETUP.queue.id, callbacks.goneId]);
  await page.getByRole('button', { name: `Reschedule ${callbacks.gone}` }).click();
  const goneForm = page.getByRole('form', { name: `Reschedule the callback to ${callbacks.gone}` });
  await goneForm.getByRole('button', { name: 'Save new time' }).click();
  await goneForm.getByText('This callback was cancelled. Request a new one instead.').waitFor();
  // the row is read again: cancelled, no actions, and the form says why its save is off
  await rows(page).filter({ hasText: callbacks.gone }).first().getByRole('cell', { name: 'cancelled' }).waitFor();
  assert.equal(await page.getByRole('button', { name: `Reschedule ${callbacks.gone}` }).count(), 0);
  assert.equal(await goneForm.getByRole('button', { name: 'Save new time' }).isDisabled(), true);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'callbacks-refused');
}));
