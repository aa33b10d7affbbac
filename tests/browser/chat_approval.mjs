// The chat_approval page in a real browser (Debian's Chromium, driven over the DevTools protocol
// by playwright-core): a prompt, the tool call that appears, Approve, its result and the final
// text; then the same with Deny; over AG-UI, then over the Vercel AI data stream. Screenshots go
// to the artefacts folder.
//
//   node chat_approval.mjs http://127.0.0.1:PORT ARTEFACTS_DIR
import { chromium } from 'playwright-core';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, artefacts = 'ui-artifacts'] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const profile = mkdtempSync(join(tmpdir(), 'toolsmith-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  chromiumSandbox: false,
  args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
  viewport: { width: 900, height: 640 },
});
const timeout = 15_000;
const results = {};

async function path(name, query, prompt, decide, expectCard, expectText) {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`${name}: page error: ${e.message}`));
  try {
    await page.goto(base + query);
    await page.fill('#prompt', prompt);
    await page.click('#send');
    const card = page.locator('.tool-call', { has: page.locator('.name', { hasText: 'send_email' }) });
    await card.waitFor({ timeout });
    await card.locator('.tool-args', { hasText: 'ada@example.com' }).waitFor({ timeout });
    const button = card.locator(`button.${decide}`);
    await button.waitFor({ timeout });
    await page.locator('.msg.assistant', { hasText: 'I will send that email.' }).waitFor({ timeout });
    await page.screenshot({ path: join(artefacts, `${name}-1-waiting.png`) });
    await button.click();
    await page.locator(expectCard).waitFor({ timeout });
    await page.locator('.msg.assistant', { hasText: expectText }).waitFor({ timeout });
    await page.locator('#send:enabled').waitFor({ timeout }); // the run's stream has ended
    await page.screenshot({ path: join(artefacts, `${name}-2-done.png`) });
    results[name] = 'passed';
  } catch (e) {
    await page.screenshot({ path: join(artefacts, `${name}-failed.png`) }).catch(() => {});
    results[name] = `failed: ${e.message.split('\n')[0]}`;
  } finally {
    await page.close();
  }
}

for (const [protocol, query] of [['ag-ui', '/'], ['vercel-ai', '/?protocol=vercel']]) {
  await path(`${protocol}-approve`, query, 'Email ada@example.com the meeting notes', 'approve',
    '.tool-call.done >> .tool-result:has-text("Email sent to ada@example.com")',
    'Done. Email sent to ada@example.com with subject "Meeting notes".');
  await path(`${protocol}-deny`, query, 'Email ada@example.com the meeting notes', 'deny',
    '.tool-call.denied', 'Understood: I did not send the email (The user denied it.).');
}
await context.close();
rmSync(profile, { recursive: true, force: true });

for (const [name, result] of Object.entries(results)) console.log(`browser test, ${name} path: ${result}`);
process.exit(Object.values(results).every((r) => r === 'passed') && Object.keys(results).length === 4 ? 0 : 1);
