#!/usr/bin/env node
/**
 * benchmarks/console_bench.py's browser half: signs in once, then opens the Call records screen
 * `runs` times in fresh page loads and prints, as one JSON line, the time from the navigation's
 * start to the first page of records on screen (the rows rendered: the screen is usable), by
 * the page's own clock (performance.now(); the navigation starts at 0).
 *
 *   env: CONSOLE_BENCH = {"url": "http://<tenant>.localhost:<port>", "username", "password", "runs"}
 */
import { launch, newPage } from './browser.js';

const config = JSON.parse(process.env.CONSOLE_BENCH);
const browser = await launch();
try {
  const { page } = await newPage(browser);
  await page.goto(`${config.url}/console/login`);
  await page.getByLabel('Username').fill(config.username);
  await page.getByLabel('Password').fill(config.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Phone numbers' }).waitFor();
  const times = [];
  for (let n = 0; n < config.runs; n += 1) {
    await page.goto(`${config.url}/console/calls`);
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 50);
    times.push(await page.evaluate(() => performance.now()));
  }
  const rows = await page.locator('table tbody tr').count();
  process.stdout.write(`${JSON.stringify({ times, rows })}\n`);
} finally {
  await browser.close();
}
