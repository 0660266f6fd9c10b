// The login page's single sign-on, in Debian's chromium (playwright-core, never a downloaded
// browser): read the tenant's SSO options as the console login page does, follow its start URL
// to the provider, sign in and consent there, and land on the API's callback.
//
//   node browser_sign_in.mjs <tenant origin> <login> <screenshot dir>
//   stdout: one JSON line {"options", "providerPage", "callbackUrl", "status", "body"}
//   any failure: {"error": "..."} and exit 1
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [origin, login, shots] = process.argv.slice(2);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP_MS = 20000;

const profile = mkdtempSync(path.join(os.tmpdir(), 'sso-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM, headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  await page.goto(`${origin}/`).catch(() => {}); // same origin for the fetch below (404 is fine)
  const options = await page.evaluate(async () => (await fetch('/auth/sso')).json());
  await page.goto(`${origin}${options.start_url}`);
  await page.waitForSelector('input[name="login"]');
  const providerPage = page.url();
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any password');
  await page.screenshot({ path: path.join(shots, 'provider-login.png') });
  await page.click('button[type="submit"]');
  await page.waitForSelector('button:has-text("Continue")');
  const callback = page.waitForResponse((r) => r.url().startsWith(`${origin}/auth/sso/callback`));
  await page.click('button:has-text("Continue")');
  const landed = await callback;
  const body = await landed.json();
  await page.screenshot({ path: path.join(shots, 'callback.png') });
  process.stdout.write(`${JSON.stringify({ options, providerPage, callbackUrl: landed.url(), status: landed.status(), body })}\n`);
} catch (error) {
  const page = context.pages()[0];
  if (page) await page.screenshot({ path: path.join(shots, 'failure.png') }).catch(() => {});
  process.stdout.write(`${JSON.stringify({ error: String(error && error.stack || error) })}\n`);
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
