// The page in Debian's headless Chromium, driven over the DevTools protocol
// on a pipe (nothing downloaded, no browser driver):
//
//   node tests/web/page_test.mjs PAGE [SCREENSHOT.png] [BIG_LOG]
//
// Opens PAGE#demo from file://, waits for the worker to diagnose the bundled
// sample, and checks that the DOM names the initiating failure and its rank
// and that the report frame holds the HTML report. With SCREENSHOT, saves
// what it shows. With BIG_LOG, also pastes that log through the page's own
// path and reports how long the diagnosis took. Exit 77 without Chromium.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [page, screenshot, bigLog] = process.argv.slice(2);
if (!existsSync(page)) {
  console.log(page + ' missing: skipped (make web)');
  process.exit(77);
}
const browser = ['chromium-headless-shell', 'chromium'].find((b) => {
  try { execFileSync('sh', ['-c', `command -v ${b}`]); return true; } catch { return false; }
});
if (!browser) {
  console.log('no headless Chromium: skipped (apt-get install chromium-headless-shell)');
  process.exit(77);
}
const profile = mkdtempSync(join(tmpdir(), 'denpex-page-'));
// --remote-debugging-pipe: the protocol on fds 3 (to Chromium) and 4 (from
// it), one JSON message per NUL byte. Works on any Node, no WebSocket.
const chrome = spawn(browser, ['--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
                               '--window-size=1200,1000', 'about:blank'],
                     { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
const fail = (why) => { console.error('FAIL: ' + why); chrome.kill(); rmSync(profile, { recursive: true, force: true }); process.exit(1); };
const timer = setTimeout(() => fail('no answer within 90 s'), 90000);
chrome.on('exit', (code) => fail('Chromium exited (' + code + ')'));
const toChrome = chrome.stdio[3];
const fromChrome = chrome.stdio[4];
let nextId = 0;
const waiting = new Map();
let buffered = '';
fromChrome.on('data', (d) => {
  buffered += d.toString('utf8');
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const m = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (m.id && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
  }
});
const send = (method, params = {}, sessionId) => new Promise((res) => {
  const id = ++nextId;
  waiting.set(id, res);
  toChrome.write(JSON.stringify({ id, method, params, sessionId }) + '\0');
});
const { result: { targetId } } = await send('Target.createTarget', { url: 'about:blank' });
const { result: { sessionId } } = await send('Target.attachToTarget', { targetId, flatten: true });
const evaluate = async (expression) => {
  const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId);
  return r.result && r.result.result ? r.result.result.value : undefined;
};
const until = async (expression, ms) => {
  for (const t0 = Date.now(); Date.now() - t0 < ms;) {
    const v = await evaluate(expression);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
};

await send('Page.enable', {}, sessionId);
await send('Page.navigate', { url: 'file://' + resolve(page) + '#demo' }, sessionId);
const initiating = await until('document.body && document.body.dataset.initiating', 60000);
if (!initiating) fail('the page named no initiating failure within 60 s; status: ' + await evaluate("document.getElementById('status').textContent"));
const verdict = await evaluate("document.getElementById('verdict').textContent");
const status = await evaluate("document.getElementById('status').textContent");
const frame = await evaluate("document.getElementById('report').srcdoc.slice(0, 200)");
const checks = [
  [initiating === 'nccl.nvls.cuda-700', 'the initiating failure is nccl.nvls.cuda-700 (got ' + initiating + ')'],
  [verdict.startsWith('denpex: rank 3 (node-017, GPU 3) nccl.nvls.cuda-700'), 'the verdict names rank 3: ' + verdict],
  [verdict.includes('fix: export NCCL_NVLS_ENABLE=0'), 'the verdict names the fix'],
  [frame.startsWith('<!DOCTYPE html>'), 'the report frame holds the HTML report'],
  [/on this machine/.test(status), 'the status says where it ran: ' + status],
];
for (const [ok, what] of checks) if (!ok) fail(what);
console.log('page: ' + verdict);
console.log('page: ' + status);
if (screenshot) {
  await send('Emulation.setDeviceMetricsOverride', { width: 1200, height: 1000, deviceScaleFactor: 1, mobile: false }, sessionId);
  const shot = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
  writeFileSync(screenshot, Buffer.from(shot.result.data, 'base64'));
  console.log('page: screenshot ' + screenshot);
}
if (bigLog) {
  // The log reaches the page first (the DevTools transfer is not the page's
  // time); then it is picked as a file, the way a user drops one.
  const text = readFileSync(bigLog, 'utf8');
  await evaluate(`window.bigLog = ${JSON.stringify(text)}; true`);
  const t0 = Date.now();
  await evaluate(`(() => { document.body.dataset.initiating = '';
    const dt = new DataTransfer(); dt.items.add(new File([window.bigLog], 'big.log'));
    const input = document.getElementById('files'); input.files = dt.files;
    input.dispatchEvent(new Event('change')); return true; })()`);
  if (!(await until('document.body.dataset.initiating', 60000))) fail('the big log was not diagnosed within 60 s');
  const seconds = (Date.now() - t0) / 1000;
  console.log(`page: a ${(text.length / 1048576).toFixed(1)} MB log picked and diagnosed in ${seconds.toFixed(2)} s ` +
              `(${await evaluate("document.getElementById('status').textContent")})`);
  // The page stays responsive meanwhile: the work is the worker's.
  if (seconds > 2 && process.env.DENPEX_PAGE_STRICT === '1') fail('over 2 s');
}
clearTimeout(timer);
chrome.removeAllListeners('exit');
chrome.kill();
rmSync(profile, { recursive: true, force: true });
process.exit(0);
