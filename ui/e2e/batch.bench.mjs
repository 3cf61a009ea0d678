// Benchmark (not a test: run by tests/bench/app-batch.sh, which says what it measures): the
// release app's dashboard with many klanten, and its Backup all, driven by tauri-driver.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { remote } from "webdriverio";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tests/bench/app-batch.sh`);
  return value;
};
const klanten = Number(env("KLUIS_BENCH_KLANTEN"));
const rounds = Number(env("KLUIS_BENCH_ROUNDS"));
const saved = env("KLUIS_BENCH_SAVED");

const browser = await remote({
  hostname: "127.0.0.1",
  port: 4444,
  logLevel: "error",
  capabilities: { browserName: "wry", "wdio:enforceWebDriverClassic": true, "tauri:options": { application: env("KLUIS_APP_BINARY") } },
});
await browser.setTimeout({ script: 15 * 60 * 1000 });

const $t = (name) => browser.$(`[data-test="${name}"]`);
/** The klanten in the dashboard's table (it draws only those in view: see rowWindow). */
const rows = () => browser.execute(() => Number(document.querySelector('[data-test="dashboard"] table')?.getAttribute("aria-rowcount") ?? 1) - 1);

/** The app's core process: the kluis-app that tauri-driver's WebKitWebDriver started. */
const corePid = Number(execFileSync("pgrep", ["-n", "-x", "kluis-app"]).toString().trim());
const rssKib = () => {
  const status = readFileSync(`/proc/${corePid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
};

/** In the page: the ms from a click until the dashboard is whole (every row in view drawn) and
 * painted. `sort` reverses the table by name; `anew` goes to a klant's screen (not timed) and
 * back to the overview (timed: the table is made from nothing and every klant's standing read
 * again). */
const timedInPage = (act) =>
  browser.executeAsync((act, done) => {
    const click = (selector) => document.querySelector(selector).click();
    const count = () => document.querySelectorAll('[data-test="dashboard"] tbody tr.klant').length;
    const want = count();
    const measure = (action) => {
      const start = performance.now();
      action();
      // Painted: two frames after the table is whole (a frame's callbacks run before its
      // paint, so the second one starts after the first one was painted).
      const settle = () => {
        if (count() < want) return requestAnimationFrame(settle);
        requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - start)));
      };
      setTimeout(settle, 0); // after the render the click queued
    };
    if (act === "sort") return measure(() => click('[data-test="sort-klant"]'));
    click('nav [data-test^="profile-"]');
    const away = () => (count() === 0 ? measure(() => click('[data-test="overview"]')) : requestAnimationFrame(away));
    requestAnimationFrame(away);
  }, act);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (x) => `${x.toFixed(1)} ms`;

try {
  await browser.waitUntil(async () => (await rows()) === klanten, { timeout: 60000, timeoutMsg: `the dashboard never showed ${klanten} rows` });
  // Idle: the dashboard shown, nothing running, a few seconds in.
  await browser.pause(3000);
  const idle = [];
  for (let i = 0; i < 10; i++) {
    idle.push(rssKib());
    await browser.pause(100);
  }
  const render = { anew: [], sort: [] };
  for (let i = 0; i < rounds; i++) {
    render.anew.push(await timedInPage("anew"));
    render.sort.push(await timedInPage("sort"));
  }
  if ((await rows()) !== klanten) throw new Error("the dashboard lost rows");

  // Backup all, with the RSS sampled from here and the input probed in the page.
  const during = [];
  const sampler = setInterval(() => during.push(rssKib()), 100);
  const started = Date.now();
  await (await $t("backup-all")).click();
  await browser.waitUntil(async () => !(await (await $t("backup-all")).isEnabled()), { timeout: 10000, timeoutMsg: "Backup all did not start" });
  const input = await browser.executeAsync((done) => {
    const samples = [];
    const box = document.querySelector('[data-test="attention-only"]');
    // Running while a klant waits in the queue or runs (Cancel all is offered until then).
    const busy = () => document.querySelector('[data-test="cancel-all"]') !== null;
    const probe = () => {
      if (!busy()) return done(samples);
      const planned = performance.now() + 250;
      setTimeout(() => {
        box.click();
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            samples.push(performance.now() - planned);
            probe();
          }),
        );
      }, 250);
    };
    probe();
  });
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const files = readdirSync(saved, { recursive: true }).filter((f) => String(f).endsWith(".zip")).length;
  if (files !== klanten) throw new Error(`Backup all saved ${files} of ${klanten} files`);

  const idleKib = median(idle);
  const peakKib = Math.max(...during);
  const ratio = peakKib / idleKib;
  const renderWorst = Math.max(...render.anew, ...render.sort);
  const inputWorst = Math.max(...input);
  console.log(`dashboard, ${klanten} rows: shown anew ${ms(median(render.anew))} (worst ${ms(Math.max(...render.anew))}), re-sorted ${ms(median(render.sort))} (worst ${ms(Math.max(...render.sort))}), ${rounds} rounds   (target ≤ 100 ms)`);
  console.log(`Backup all, ${klanten} × ${env("KLUIS_BENCH_MIB")} MiB: ${seconds.toFixed(1)} s; input answered in ${ms(median(input))} median, ${ms(pct(input, 95))} p95, ${ms(inputWorst)} worst, ${input.length} probes   (target ≤ 50 ms)`);
  console.log(`core process RSS: idle ${(idleKib / 1024).toFixed(1)} MiB, peak during Backup all ${(peakKib / 1024).toFixed(1)} MiB, ratio ${ratio.toFixed(2)}   (target ≤ 1.20)`);
  process.exitCode = renderWorst <= 100 && inputWorst <= 50 && ratio <= 1.2 ? 0 : 1;
  if (process.exitCode) console.error("a target was missed");
} finally {
  await browser.deleteSession();
}
