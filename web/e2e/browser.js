/**
 * Debian's chromium through playwright-core (never a downloaded browser), a 1280×800 page per
 * test, axe-core run inside the page, screenshots into the artifact folder.
 * Setup comes from tests/console/test_console_browser.py in $CONSOLE_E2E.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const SETUP = JSON.parse(process.env.CONSOLE_E2E || '{}');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP_MS = 15000;

export function consoleUrl(subdomain, route = '/') {
  return `http://${subdomain}.localhost:${SETUP.port}/console${route}`;
}

export async function launch() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
  return browser;
}

/** A fresh context (its own localStorage) and page at 1280×800; CSP violations are collected. */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(STEP_MS);
  const page = await context.newPage();
  page.cspViolations = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) page.cspViolations.push(msg.text());
  });
  return { context, page };
}

/** `fn(page, context)` on a fresh page, then no CSP violation; the context is closed whatever happened. */
export async function withPage(browser, fn) {
  const { context, page } = await newPage(browser);
  try {
    await fn(page, context);
    assert.deepEqual(page.cspViolations, [], 'no Content-Security-Policy violation');
  } finally {
    await context.close();
  }
}

/** axe-core's violations on the page as it is now (evaluated through the driver, not a <script>). */
export async function axeViolations(page) {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

export async function screenshot(page, name) {
  mkdirSync(SETUP.artifacts, { recursive: true });
  await page.screenshot({ path: path.join(SETUP.artifacts, `${name}.png`) });
}

export async function signIn(page, subdomain, route = '/') {
  await page.goto(consoleUrl(subdomain, route));
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(SETUP.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** RFC 6238 (SHA-1, 30 s, 6 digits) as every authenticator app computes it, for `atMs`. */
export function totp(base32Secret, atMs) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of base32Secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 30000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1000000).padStart(6, '0');
}
