// The app in a WebDriver session (tauri-driver and WebKitWebDriver under Xvfb, started by
// tests/e2e/session.sh) and what every end-to-end test does with it: find an element by its
// data-test name, wait for a text, switch the language, take a screenshot in both languages,
// check that the dashboard reads whole.
import assert from "node:assert/strict";
import { join } from "node:path";
import { remote } from "webdriverio";
import { saveScreen } from "./screen.mjs";

export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tests/e2e/run.sh`);
  return value;
};
const shots = env("KLUIS_SCREENSHOTS");
const fbdir = env("KLUIS_FBDIR");
/** The WebDriver session of the app now started (see [`launch`]). */
export let browser;

export const $t = (name) => browser.$(`[data-test="${name}"]`);
/** Switches the UI's language as a person does, with the header's selector. */
export async function setLanguage(lang) {
  await browser.execute((l) => {
    const select = document.getElementById("language");
    select.value = l;
    select.dispatchEvent(new Event("change", { bubbles: true }));
  }, lang);
}
/** Resolves once the page has painted twice since now (the framebuffer then shows it). */
export const painted = () => browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 150))));
/** The screen as it is now, in English and in Dutch, for the artifacts (from Xvfb's
 * framebuffer: WebKitWebDriver's own screenshot can hang). */
export async function shot(name) {
  for (const lang of ["en", "nl"]) {
    await setLanguage(lang);
    await painted();
    if (!saveScreen(fbdir, join(shots, `${name}-${lang}.png`))) throw new Error("no framebuffer: run tests/e2e/run.sh");
  }
  await setLanguage("en");
}
/** The dashboard as its reader meets it, in both languages at the window's size (`size`, for
 * the message): each klant's result whole on its line (its element no wider inside than it is)
 * and the start of its reason shown, each column's heading within its column. */
export async function dashboardReads(size) {
  for (const lang of ["en", "nl"]) {
    await setLanguage(lang);
    await painted();
    const cut = await browser.execute(() => {
      const wider = (el) => el.scrollWidth > el.clientWidth + 1;
      return {
        results: [...document.querySelectorAll('[data-test="dash-result"] .status')].filter(wider).map((el) => el.firstChild?.textContent ?? el.textContent),
        // The start of each reason is read too (it ends in "…", its whole text in the tooltip):
        // at least 100 px of it, some 15 characters.
        reasons: [...document.querySelectorAll('[data-test="dash-reason"]')].filter((el) => el.getBoundingClientRect().width < 100).map((el) => el.textContent),
        headings: [...document.querySelectorAll("table.dash thead th")].filter(wider).map((th) => th.textContent),
        // Rows of one height: the table places the rows out of view by arithmetic.
        heights: [...new Set([...document.querySelectorAll("table.dash tr.klant")].map((tr) => Math.round(tr.getBoundingClientRect().height)))].length,
      };
    });
    assert.deepEqual(cut, { results: [], reasons: [], headings: [], heights: 1 }, `at ${size}, in ${lang}: cut, or rows of more than one height`);
  }
  await setLanguage("en");
}
/** What the live region says (it is visually hidden, so read as text, not as rendered). */
export const announced = () => browser.execute(() => document.querySelector('[data-test="announce"]')?.textContent ?? "");
/** The data-test name, or else the id, of the element that has the focus. */
export const focused = () => browser.execute(() => document.activeElement?.getAttribute("data-test") ?? document.activeElement?.id ?? null);
/** The button of profile `name` in the list. */
export async function profileButton(name) {
  for (const button of await browser.$$('nav [data-test^="profile-"]')) {
    if ((await button.getText()).startsWith(name)) return button;
  }
  throw new Error(`no profile named ${name}`);
}
export async function waitText(name, text, timeout = 30000) {
  const el = await $t(name);
  // When it never comes, say what the window showed instead (an error banner, a busy state),
  // and keep a screenshot of it: a failure in CI is then read, not guessed.
  await el.waitForExist({ timeout }).catch(async (e) => {
    const page = await browser.execute(() => document.querySelector("main")?.innerText ?? document.body.innerText).catch((x) => x.message);
    await shot(`failed-${name}`).catch(() => undefined);
    throw new Error(`${e.message}; the window shows: ${String(page).replace(/\s+/g, " ").slice(0, 800)}`);
  });
  await browser.waitUntil(async () => (await el.getText()).includes(text), { timeout, timeoutMsg: `${name} never showed "${text}"` }).catch(async (e) => {
    const now = await browser.execute((n) => (document.querySelector(`[data-test="${n}"]`)?.outerHTML ?? "(none)").slice(0, 600), name);
    throw new Error(`${e.message}; it shows: ${now}; getText: ${await el.getText().catch((x) => x.message)}`);
  });
  return el;
}

/** Waits until the dashboard's row `name` says `text`. Read as the row's text, not WebDriver's
 * visible text: that leaves out the text of a box that cuts it to its lines (`overflow:
 * hidden`), and the dashboard cuts each klant's name and result so that every row has one
 * height (the whole text is in their tooltips; the screenshots show the rows drawn). */
export async function waitRow(name, text, timeout = 30000) {
  const says = () => browser.execute((n) => document.querySelector(`[data-test="${n}"]`)?.textContent ?? "", name);
  await browser.waitUntil(async () => (await says()).includes(text), { timeout, timeoutMsg: `${name} never said "${text}"` }).catch(async (e) => {
    throw new Error(`${e.message}; it says: ${await says()}`);
  });
}

/** Starts the app (in demo mode, unless `args` say otherwise) in a new WebDriver session,
 * which [`browser`] is from then on. */
export async function launch(args = ["--demo"]) {
  browser = await remote({
    hostname: "127.0.0.1",
    port: 4444,
    logLevel: "error",
    // One try, 30 s at most, per WebDriver request (a hung screenshot must not take minutes).
    connectionRetryTimeout: 30000,
    connectionRetryCount: 0,
    capabilities: {
      browserName: "wry",
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application: env("KLUIS_APP_BINARY"), args },
    },
  });
  return browser;
}
