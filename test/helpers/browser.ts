// Debian's Chromium driven by playwright-core, for the console's tests: launched headless per test file, each test
// in a context of its own (its own cookies), with an accessibility check (axe-core) and screenshots a reviewer can
// look at without running anything.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumBin } from './services.js';

type TapLike = { teardown(fn: () => Promise<void> | void): void };

/** Where the tests write their screenshots (ignored by git). */
export const SCREENSHOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'browser', 'screenshots');

/** Chromium, closed when the test ends. The flags keep it off the network this machine does not have. */
export async function launchBrowser(t: TapLike): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumBin(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The page's serious and critical accessibility violations (axe-core's rules), one line each. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated, not added as a script tag: the console's policy refuses inline scripts, as it should.
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(context: Document): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }> } }
    ).axe;
    const { violations } = await axe.run(document);
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length} element(s))`);
  });
}

/** A full-page screenshot named `name`.png in SCREENSHOT_DIR. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
