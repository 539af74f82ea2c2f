// Headless Chromium for the browser tests: Debian's `chromium`
// (/usr/bin/chromium, or NETHTTP_CHROMIUM) driven by the playwright-core
// devDependency. `skip` is false when both are there, else the reason.
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.NETHTTP_CHROMIUM || '/usr/bin/chromium';

let playwright = null;
try {
  playwright = await import('playwright-core');
} catch {
  playwright = null;
}

export const skip = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : !playwright ? 'playwright-core is not installed' : false;

/** Headless, with no network of its own (no QUIC, no background fetches). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A headless Chromium driven by playwright-core. */
export function launchChromium() {
  return playwright.chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** A new page whose console messages and page errors are collected in `logs`. */
export async function newLoggedPage(browser, viewport) {
  const page = await browser.newPage({ viewport });
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  return { page, logs };
}
