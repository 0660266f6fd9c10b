/**
 * A real call on the console (driven by tests/realswitch/test_console_realswitch.py, against the
 * real-switch suite's `sbc api` with the real controller, workers and FreeSWITCH): the Live view
 * lists a sipp trunk call while it runs and drops it when it ends; Call records finds it, plays
 * its recording through a media ticket with HTTP Range and shows its transcript. The Python half
 * places the call once this page has written `SETUP.ready`, and writes the call's record,
 * recording and transcript to `SETUP.call` once the media pipeline is done with it.
 * Every screen: axe-core reports no violation, and a screenshot is kept.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as pause } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, launch, screenshot, signIn, withPageOf } from './browser.js';

const CALL_START_MS = 30000;  // sipp's INVITE to the controller's call.started on the page
const CALL_END_MS = 60000;    // the caller talks 4 s, then BYE
const PIPELINE_MS = 150000;   // the Python half waits up to 90 s for the transcript
const POLL_MS = 100;
let browser;

before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const withPage = (fn) => withPageOf(browser, fn);

/** The call the Python half wrote once its record, recording and transcript existed. */
async function theCall() {
  const deadline = Date.now() + PIPELINE_MS;
  while (!existsSync(SETUP.call)) {
    assert.ok(Date.now() < deadline, `no call from the Python half within ${PIPELINE_MS} ms`);
    await pause(POLL_MS); // a file from another process: polled, no event to wait on
  }
  const call = JSON.parse(readFileSync(SETUP.call, 'utf8'));
  assert.equal(call.abort, undefined, `the Python half failed: ${call.abort}`);
  return call;
}

test('the Live view: a sipp trunk call appears while it runs, without a reload, and leaves when it ends', () => withPage(async (page) => {
  let navigations = 0;
  page.on('framenavigated', (frame) => { if (frame === page.mainFrame()) navigations += 1; });
  await signIn(page, SETUP.subdomain, '/live');
  await page.getByRole('heading', { name: 'Live view' }).waitFor();
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  const loadsBefore = navigations;
  writeFileSync(SETUP.ready, 'ready'); // the Python half places the call now
  const readyAt = Date.now();

  const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: SETUP.number, exact: true }) });
  await row.waitFor({ timeout: CALL_START_MS });
  const shownAt = Date.now();
  assert.match(await row.innerText(), /15550001/, 'the sipp caller');
  assert.match(await row.innerText(), /inbound/);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'realswitch-live-call');

  await row.waitFor({ state: 'detached', timeout: CALL_END_MS });
  const goneAt = Date.now();
  assert.equal(navigations, loadsBefore, 'no reload: the call was pushed');
  console.log(`live view: call shown ${shownAt - readyAt} ms after the page was ready, gone ${goneAt - shownAt} ms after shown`);
}));

test('Call records: the call is found, its recording plays by ranges through a ticket, its transcript is shown', () => withPage(async (page) => {
  const call = await theCall();
  await signIn(page, SETUP.subdomain, '/calls');
  await page.getByRole('heading', { name: 'Call records' }).waitFor();
  await page.getByLabel('Number').fill(SETUP.number);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(new RegExp(`number=${SETUP.number}`));
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'realswitch-call-records');

  const media = [];
  page.on('response', async (response) => {
    if (!response.url().includes('/stream?ticket=')) return;
    const headers = await response.request().allHeaders();
    media.push({ status: response.status(), range: headers.range, contentRange: response.headers()['content-range'] });
  });
  await page.locator('table tbody tr').first().getByRole('link').click();
  await page.waitForURL(new RegExp(`/console/calls/${call.id}$`));
  await page.getByRole('heading', { name: 'Transcript' }).waitFor();
  // the transcript as the media pipeline wrote it: each segment's speaker, words and sentiment
  const transcript = page.locator('table', { has: page.getByRole('columnheader', { name: 'Sentiment' }) });
  await transcript.locator('tbody tr').first().waitFor();
  const shown = await transcript.locator('tbody tr').evaluateAll((rows) => rows.map((tr) => [...tr.cells].map((td) => td.textContent)));
  assert.deepEqual(shown.map(([, speaker, text]) => ({ speaker, text })), call.segments.map(({ speaker, text }) => ({ speaker, text })));
  shown.forEach(([, , , sentiment], n) => assert.match(sentiment,
    new RegExp(`^(positive|negative|neutral) \\(${call.segments[n].polarity.toFixed(2).replace('.', '\\.')}\\)$`)));
  // nobody joined this trunk call (the application answered and recorded it): the summary's
  // Talk is the caller's talk with the application, not the summary's agent talk of 0
  const talk = page.locator('dt', { hasText: /^Talk$/ }).locator('xpath=following-sibling::dd[1]');
  assert.equal(await talk.innerText(),
    `${(call.talkMs / 1000).toFixed(1)} s with the application: no agent or other party joined the call`);
  const audio = page.locator('audio');
  await audio.waitFor();
  const duration = await audio.evaluate((el) => new Promise((resolve) => {
    if (el.readyState >= 1 && el.src) resolve(el.duration);
    el.addEventListener('loadedmetadata', () => resolve(el.duration), { once: true });
  }));
  assert.ok(Math.abs(duration - call.recordingMs / 1000) < 0.1, `recording plays ${duration} s of ${call.recordingMs} ms`);
  assert.ok(Math.abs(duration - call.talkMs / 1000) < 1.0, `recording ${duration} s of a ${call.talkMs} ms talk`);
  const src = await audio.getAttribute('src');
  assert.match(src, /^\/api\/recordings\/[0-9a-f-]+\/stream\?ticket=/);
  assert.ok(media.some((m) => m.status === 206 && m.range && m.contentRange?.endsWith(`/${call.bytes}`)),
    `the player asked by range and got 206: ${JSON.stringify(media)}`);
  const part = await page.evaluate(async (url) => {
    const r = await fetch(url, { headers: { Range: 'bytes=1000-1099' }, credentials: 'omit' });
    return { status: r.status, length: (await r.arrayBuffer()).byteLength, contentRange: r.headers.get('content-range') };
  }, src);
  assert.deepEqual(part, { status: 206, length: 100, contentRange: `bytes 1000-1099/${call.bytes}` });
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'realswitch-call-record');
  await page.getByRole('heading', { name: 'Transcript' }).scrollIntoViewIfNeeded();
  await screenshot(page, 'realswitch-call-record-transcript');
  console.log(`call record: recording ${duration.toFixed(3)} s in the player (${call.recordingMs} ms recorded, talk ${call.talkMs} ms), ${media.length} ranged responses`);
}));
