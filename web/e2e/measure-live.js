#!/usr/bin/env node
/**
 * benchmarks/console_bench.py's live-view half: signs in, opens the Live view, and `runs` times
 * publishes a bus event through the product's outbox publisher (e2e/bus.js), timing it from
 * just before `emit` to the figure on screen (a MutationObserver in the page; both clocks are
 * this machine's wall clock). Two paths, `runs` each:
 *   - enqueue: a caller joins the Redis line and queue.caller.enqueued is emitted: the server
 *     reads the board again and pushes a snapshot;
 *   - metrics: a queue.metrics event, pushed as it is.
 * Prints one JSON line {enqueue: [ms…], metrics: [ms…]}.
 *
 *   env: CONSOLE_BENCH = {"url", "username", "password", "runs", "account", "queueId", "python", "root"}
 */
import { randomUUID } from 'node:crypto';
import { launch, newPage } from './browser.js';
import { WAITING_IS, startBus, watchFor } from './bus.js';

const config = JSON.parse(process.env.CONSOLE_BENCH);
const browser = await launch();
const bus = startBus(config);
try {
  const { page } = await newPage(browser);
  await page.goto(`${config.url}/console/login?next=%2Flive`);
  await page.getByLabel('Username').fill(config.username);
  await page.getByLabel('Password').fill(config.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Live: figures are pushed as they change.').waitFor();
  const result = { enqueue: [], metrics: [] };
  for (let n = 1; n <= config.runs; n += 1) {
    await watchFor(page, WAITING_IS, { queue: 'Sales', waiting: n });
    const sent = await bus.send({ action: 'enqueue', account: config.account, queue: 'Sales', callId: randomUUID() });
    result.enqueue.push((await page.evaluate(() => window.__seen)) - sent.emittedAt);
  }
  for (let n = 1; n <= config.runs; n += 1) {
    const waiting = 1000 + n;
    await watchFor(page, WAITING_IS, { queue: 'Sales', waiting });
    const sent = await bus.send({ action: 'emit', account: config.account, type: 'queue.metrics', payload: {
      accountSid: config.account, queueId: config.queueId, queue: 'Sales', strategy: 'longest_idle', waiting,
      longestWaitSeconds: 1, agents: { available: 0, not_ready: 0, wrap_up: 0, offline: 0 }, agentsEngaged: 0,
      serviceLevel: { targetSeconds: 20, windowSeconds: 900, answered: 0, withinTarget: 0, percent: null }, periodSeconds: 30 } });
    result.metrics.push((await page.evaluate(() => window.__seen)) - sent.emittedAt);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await browser.close();
  await bus.stop();
}
