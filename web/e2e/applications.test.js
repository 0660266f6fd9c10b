/**
 * Applications and the visual call-flow editor in chromium against the real `sbc api` (driven by
 * tests/console/test_console_applications_browser.py, which runs the API in the loopback
 * development mode so "Try it" reaches this file's own hook server). Every screen: axe-core
 * reports no violation, and a 1280×800 screenshot is kept.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { SETUP, axeViolations, launch, screenshot, signIn, withPageOf } from './browser.js';

let browser;
let hookServer;
let hookUrl;
const hookRequests = [];
let hookReply = { status: 200, body: [{ verb: 'say', text: 'Welcome to Acme' }, { verb: 'hangup' }] };

before(async () => {
  browser = await launch();
  hookServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      hookRequests.push({ method: req.method, headers: req.headers, body: JSON.parse(body || 'null') });
      res.writeHead(hookReply.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(hookReply.body));
    });
  });
  await new Promise((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${hookServer.address().port}/voice`;
});
after(async () => { await browser?.close(); hookServer?.close(); });

const withPage = (fn) => withPageOf(browser, fn);

/** The API as the page sees it (same origin, the page's own token). */
function api(page, path) {
  return page.evaluate(async (p) => {
    const response = await fetch(p, { headers: { Authorization: `Bearer ${localStorage.getItem('admin_auth_token')}` } });
    return response.json();
  }, path);
}

async function applicationId(page, name) {
  const apps = await api(page, '/api/applications');
  return apps.items.find((a) => a.name === name).id;
}

test('Applications: the verb list checked as typed with JSON Pointers, a private hook refused beside its field with everything kept, then saved', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/applications');
  await page.getByRole('heading', { name: 'Applications', exact: true }).waitFor();
  await page.getByRole('status').filter({ hasText: 'No applications yet.' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'applications');

  await page.getByLabel('Application name').fill('Developer app');
  await page.getByLabel('Call hook URL').fill('https://10.0.0.1/voice');
  const verbs = page.getByLabel('Verb list (app_json)');
  await verbs.fill('[{"verb": "say", "text": "Sorry, we are closed."}, {"verb": "dial", "target": [{"type": "phone"}]}]');
  const problems = page.getByRole('list', { name: 'Problems in the verb list' });
  await problems.waitFor();
  const pointers = await problems.locator('code').allInnerTexts();
  assert.ok(pointers.some((p) => p.startsWith('/1/target/0')), `a pointer into the dial target: ${pointers}`);
  // the same problem beside the dial's target in its form; then the form fixes it
  await page.getByText('Edit the verbs in forms').click();
  const dial = page.getByRole('group', { name: 'Verb 2: dial' });
  await page.waitForFunction(() => document.querySelector('[name="verb-1-target"]')?.getAttribute('aria-invalid') === 'true');
  assert.deepEqual(await axeViolations(page), []);
  await dial.getByLabel('Who to call (required)').fill('[{"type": "phone", "name": "+15551230000"}]');
  await page.getByText('The server accepts it: say, dial.').waitFor();
  assert.deepEqual(JSON.parse(await verbs.inputValue())[1].target, [{ type: 'phone', name: '+15551230000' }]);
  await verbs.fill('[{"verb": "say", "text": "Sorry, we are closed."}, {"verb": "hangup"}]');
  await page.getByText('The server accepts it: say, hangup.').waitFor();

  await page.getByRole('button', { name: 'Add application' }).click();
  const hook = page.getByLabel('Call hook URL');
  await page.getByText('The server refused this URL: it must be https://').waitFor();
  assert.equal(await hook.getAttribute('aria-invalid'), 'true');
  assert.equal(await hook.inputValue(), 'https://10.0.0.1/voice', 'what was typed stays');
  assert.equal(await page.getByLabel('Application name').inputValue(), 'Developer app');
  assert.match(await verbs.inputValue(), /we are closed/);
  assert.deepEqual(await axeViolations(page), []);
  await hook.scrollIntoViewIfNeeded();
  await screenshot(page, 'application-refused-hook');

  await hook.fill(hookUrl);
  await page.getByRole('button', { name: 'Add application' }).click();
  await page.getByRole('heading', { name: 'Application Developer app' }).waitFor();
  const saved = await api(page, `/api/applications/${page.url().split('/').pop()}`);
  assert.equal(saved.call_hook_url, hookUrl);
  assert.deepEqual(saved.app_json, [{ verb: 'say', text: 'Sorry, we are closed.' }, { verb: 'hangup' }]);
  await page.getByText('Answers with:').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'application');
}));

test('Try it: the saved hook gets the first request of a call; the steps the call would run, then a failure as the CLI says it', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/applications');
  await page.getByRole('link', { name: 'Developer app' }).click();
  await page.getByRole('heading', { name: 'Application Developer app' }).waitFor();
  const id = page.url().split('/').pop();
  await page.getByLabel('From').fill('15551230000');
  await page.getByRole('button', { name: 'Try it', exact: true }).click();
  await page.getByText('Accepted: the call would run these steps.').waitFor();
  const steps = await page.locator('.try-steps li').allInnerTexts();
  assert.match(steps[0], /^say: speak 'Welcome to Acme' with voice/);
  assert.equal(steps[1], 'hangup: hang up');
  const request = hookRequests.at(-1);
  assert.equal(request.method, 'POST');
  assert.equal(request.body.applicationSid, id);
  assert.equal(request.body.from, '15551230000');
  assert.equal(request.body.callStatus, 'ringing');
  assert.deepEqual(await axeViolations(page), []);
  await page.getByRole('heading', { name: 'Try it' }).evaluate((el) => el.scrollIntoView());
  await screenshot(page, 'application-try-it');

  hookReply = { status: 500, body: {} };
  await page.getByRole('button', { name: 'Try it', exact: true }).click();
  await page.getByText(/^Failed: no usable reply/).waitFor();
  assert.match(await page.locator('.try-failure').innerText(), /^failed: http_status.*last status 500/);
  hookReply = { status: 200, body: [{ verb: 'hangup' }] };
}));

/** The node of the canvas whose id is `id`. */
const canvasNode = (page, id) => page.locator(`.react-flow__node[data-id="${id}"]`);

test('The flow editor: nodes added, linked and branched from the keyboard, dragged, connected by mouse, undone, exported, saved and used by an application', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/flows');
  await page.getByRole('heading', { name: 'Call flows', exact: true }).waitFor();
  await page.getByRole('status').filter({ hasText: 'No call flows yet.' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await page.getByLabel('Flow name').fill('IVR');
  await page.getByRole('button', { name: 'Add call flow' }).click();
  await page.getByRole('heading', { name: 'Call flow IVR' }).waitFor();
  await page.getByText('The server accepts this flow.').waitFor();

  // a queue node from the keyboard: its empty name is refused by the server, on the node
  await page.getByLabel('Verb', { exact: true }).selectOption('queue');
  await page.getByLabel('Node id').focus();
  await page.keyboard.type('sales');
  await page.keyboard.press('Enter');
  await canvasNode(page, 'sales').waitFor();
  await canvasNode(page, 'sales').locator('.node-problem').first().waitFor();
  await page.getByLabel('Verb (JSON)').fill('{"verb": "queue", "name": "sales"}');
  await page.getByRole('button', { name: 'Apply verb' }).click();
  // only "unreachable" is left until it is linked below
  await page.waitForFunction(() => [...document.querySelectorAll('.react-flow__node[data-id="sales"] .node-problem')]
    .map((p) => p.textContent).join('|') === 'Unreachable from start.');

  await page.getByLabel('Verb', { exact: true }).selectOption('gather');
  await page.getByLabel('Node id').fill('menu');
  await page.getByRole('button', { name: 'Add node' }).click();
  for (const key of ['1', 'sales']) {
    await page.getByLabel('New branch: digits or words').fill(key);
    await page.getByRole('button', { name: 'Add branch' }).click();
    await page.getByLabel(`Branch “${key}” goes to`).selectOption('sales');
  }
  await page.getByLabel('Selected node').selectOption('start');
  await page.getByLabel('Next goes to').selectOption('menu');
  await page.getByText('The server accepts this flow.').waitFor();

  // the verbs' forms (from the server's verb schema): the gather's input refused by the server,
  // beside its field; then the welcome's loop set in its form
  await page.getByLabel('Selected node').selectOption('menu');
  const gather = page.getByRole('group', { name: 'gather: fields' });
  await gather.getByLabel('Listen for (keys, speech)', { exact: true }).fill('["fax"]');
  await page.getByRole('button', { name: 'Apply verb' }).click();
  await page.waitForFunction(() => document.querySelector('[name="verb-input"]')?.getAttribute('aria-invalid') === 'true');
  assert.match(await gather.locator('.field-error').first().innerText(), /^0: /u);
  assert.deepEqual(await axeViolations(page), []);
  await page.locator('.verb-form').evaluate((el) => el.scrollIntoView());
  await screenshot(page, 'flow-verb-form-refused');
  await gather.getByLabel('Listen for (keys, speech)', { exact: true }).fill('["dtmf", "speech"]');
  await page.getByRole('button', { name: 'Apply verb' }).click();
  await page.getByText('The server accepts this flow.').waitFor();
  await page.getByLabel('Selected node').selectOption('start');
  await page.getByRole('group', { name: 'say: fields' }).getByLabel('Times to say it', { exact: true }).fill('2');
  await page.getByRole('button', { name: 'Apply verb' }).click();
  await page.getByText('The server accepts this flow.').waitFor();

  // delete, then undo
  await page.getByLabel('Selected node').selectOption('sales');
  await page.getByRole('button', { name: 'Delete node sales' }).click();
  await canvasNode(page, 'sales').waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Undo' }).click();
  await canvasNode(page, 'sales').waitFor();

  // drag a node, then undo the move (all nodes in view first)
  await page.locator('.flow-canvas').evaluate((el) => el.scrollIntoView());
  await page.locator('.react-flow__controls-fitview').click();
  await page.waitForTimeout(300); // the fit-view transition (a scenario duration, not a condition)
  const before = await canvasNode(page, 'sales').boundingBox();
  await page.mouse.move(before.x + 20, before.y + 10);
  await page.mouse.down();
  await page.mouse.move(before.x + 140, before.y + 60, { steps: 8 });
  await page.mouse.up();
  const moved = await canvasNode(page, 'sales').boundingBox();
  assert.ok(Math.abs(moved.x - before.x) > 50, `dragged: ${before.x} → ${moved.x}`);
  await page.getByRole('button', { name: 'Undo' }).click();
  await page.waitForFunction(([x]) => Math.abs(document.querySelector('.react-flow__node[data-id="sales"]').getBoundingClientRect().x - x) < 2, [before.x]);

  // connect by mouse: the gather's "Timeout or no match" output to the welcome (say it again)
  const from = await canvasNode(page, 'menu').locator('.react-flow__handle[data-handleid="default"]').boundingBox();
  const to = await canvasNode(page, 'start').locator('.react-flow__handle.target').boundingBox();
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 10 });
  await page.mouse.up();

  await page.getByRole('button', { name: 'Export' }).click();
  const exported = JSON.parse(await page.getByLabel('Flow JSON').inputValue());
  assert.equal(exported.nodes.start.next, 'menu');
  assert.deepEqual(exported.nodes.menu.branches, { 1: 'sales', sales: 'sales' });
  assert.equal(exported.nodes.menu.default, 'start', 'connected by mouse');
  assert.equal(exported.nodes.start.verb.loop, 2, 'set in the say form');
  assert.deepEqual(exported.nodes.menu.verb.input, ['dtmf', 'speech'], 'set in the gather form');

  await page.getByRole('button', { name: 'Save flow' }).click();
  await page.getByText('Saved.').waitFor();
  const flows = await api(page, '/api/call-flows');
  const ivr = flows.items.find((f) => f.name === 'IVR');
  assert.deepEqual(ivr.definition, exported);
  await page.getByLabel('Selected node').selectOption('menu');
  assert.deepEqual(await axeViolations(page), []);
  await page.getByRole('heading', { name: 'Call flow IVR' }).evaluate((el) => el.scrollIntoView());
  await screenshot(page, 'flow-editor');

  // the application answers with it
  await page.goto(page.url().replace(/\/flows\/.*/, `/applications/${await applicationId(page, 'Developer app')}`));
  await page.getByLabel('Call flow').selectOption({ label: 'IVR' });
  await page.getByRole('button', { name: 'Save application' }).click();
  await page.getByText('Saved.').waitFor();
  await page.getByText('Answers with: Call flow').waitFor();
  await page.getByRole('link', { name: 'Open this call flow in the editor' }).click();
  await page.getByRole('heading', { name: 'Call flow IVR' }).waitFor();
}));

test('The Call flows list, then the flow editor: an imported flow the engine refuses shows each problem on its node, nothing is lost, undo brings the flow back', () => withPage(async (page) => {
  await signIn(page, SETUP.subdomain, '/flows');
  await page.getByRole('heading', { name: 'Call flows', exact: true }).waitFor();
  await page.getByRole('link', { name: 'IVR' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'call-flows');
  await page.getByRole('link', { name: 'IVR' }).click();
  await page.getByRole('heading', { name: 'Call flow IVR' }).waitFor();
  await page.getByLabel('Flow JSON').fill(JSON.stringify({ start: 'hello', nodes: {
    hello: { verb: { verb: 'say', text: 'Hello' } }, orphan: { verb: { verb: 'hangup' } } } }));
  await page.getByRole('button', { name: 'Import' }).click();
  await canvasNode(page, 'orphan').getByText('Unreachable from start.').waitFor();
  await page.getByRole('button', { name: 'Save flow' }).click();
  await page.getByText('The server refused the flow: each problem is shown on its node.').waitFor();
  await canvasNode(page, 'orphan').waitFor();
  assert.equal(await page.getByLabel('Flow name').inputValue(), 'IVR');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'flow-editor-refused');
  await page.getByRole('button', { name: 'Undo' }).click();
  await canvasNode(page, 'menu').waitFor();
  await page.getByText('The server accepts this flow.').waitFor();
  await page.getByRole('button', { name: 'Save flow' }).click();
  await page.getByText('Saved.').waitFor();
}));
