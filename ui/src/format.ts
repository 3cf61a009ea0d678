// Human-readable sizes, rates and times, with the UI language's decimal mark (`256,0 MB/s`
// in Dutch).
//
// Numbers, dates and ages are written here for the UI's two locales (i18n's `locale()`: nl-NL
// and en-GB), not by Intl's NumberFormat, DateTimeFormat and RelativeTimeFormat. Why: the
// first of those a page uses makes WebKit read the ICU library's locale data into the web
// process — 2.8 MiB of an idle window's memory (`tests/bench/window-idle.sh`), for a handful
// of patterns; and each web view's ICU writes them its own way (WebKitGTK's ICU 72 "28 nov
// 2026 09:05", a newer ICU "28 nov 2026, 09:05"), where these read the same everywhere. Sorting
// names keeps Intl's Collator (cheap, and alphabetical order is not a handful of patterns).
import { locale } from "./i18n";

/** An Intl formatter for `loc` and `options`, made once and kept: making one costs far more
 * than using it (what uses one now is the Collator, which sorts 200 klanten with about 1,500
 * comparisons). */
export function formatter<T>(make: (loc: string, options: object) => T, kind: string, loc: string, options: object): T {
  const key = `${kind} ${loc} ${JSON.stringify(options)}`;
  let made = formatters.get(key) as T | undefined;
  if (made === undefined) {
    made = make(loc, options);
    formatters.set(key, made);
  }
  return made;
}
const formatters = new Map<string, unknown>();

const dutch = (loc: string) => loc.toLowerCase().startsWith("nl");

/** `value` rounded to `digits` decimals, as `loc` writes numbers: "1.234,5" in Dutch, "1,234.5"
 * in English. Rounded half away from zero on the number as written (1312.55 → 1312.6, as Intl
 * did), not on its binary value (which `toFixed` rounds down there: 1312.549999…). */
export function decimal(value: number, digits: number, loc: string): string {
  const [whole, fraction] = roundedDigits(Math.abs(value), digits);
  const [group, mark] = dutch(loc) ? [".", ","] : [",", "."];
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, group);
  return `${value < 0 ? "-" : ""}${grouped}${fraction === "" ? "" : mark + fraction}`;
}

/** The whole part's and the fraction's digits of `abs` (≥ 0) rounded to `digits` decimals. */
function roundedDigits(abs: number, digits: number): [string, string] {
  // Shifting the decimal point in the number's text keeps "1312.55" exact; a number JavaScript
  // writes with an exponent (below 1e-6, from 1e21) is left to toFixed.
  const scaled = Math.round(Number(`${abs}e${digits}`));
  if (String(abs).includes("e") || !Number.isSafeInteger(scaled)) {
    const [whole, fraction = ""] = abs.toFixed(digits).split(".");
    return [whole, fraction];
  }
  const text = String(scaled).padStart(digits + 1, "0");
  return [text.slice(0, text.length - digits), text.slice(text.length - digits)];
}

export function bytes(n: number | null | undefined, loc = locale()): string {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${decimal(value, value < 10 ? 1 : 0, loc)} ${units[unit]}`;
}

export function rate(bytesPerSec: number, loc = locale()): string {
  return `${decimal(bytesPerSec / (1024 * 1024), 1, loc)} MB/s`;
}

/** 75 → "1:15", 3725 → "1:02:05". */
export function clock(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** Seconds left at the current rate, or null when it cannot be known. */
export function secondsLeft(done: number, total: number | null, bytesPerSec: number): number | null {
  if (total === null || bytesPerSec <= 0) return null;
  return Math.max(0, (total - done) / bytesPerSec);
}

export function percent(done: number, total: number | null): number | null {
  if (total === null || total === 0) return null;
  return Math.min(100, Math.floor((done / total) * 100));
}

const months = {
  nl: ["jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"],
  // (CLDR's English abbreviation of September, as Intl wrote it here before.)
  en: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec"],
};
const twoDigits = (n: number) => String(n).padStart(2, "0");

/** The day, month and year, and the time ("28 Nov 2026, 09:05"; "28 nov 2026, 09:05"). */
export function dateTime(ms: number, loc: string): string {
  if (!Number.isFinite(ms)) return "—";
  return `${dayMonth(ms, loc)} ${new Date(ms).getFullYear()}, ${timeOfDay(ms)}`;
}

/** A moment as a narrow column shows it: without the year when it is this year's
 * ("28 Nov, 02:25"), else as [`dateTime`] does. */
export function shortDateTime(ms: number, loc: string, now = Date.now()): string {
  if (!Number.isFinite(ms)) return "—";
  if (new Date(ms).getFullYear() !== new Date(now).getFullYear()) return dateTime(ms, loc);
  return `${dayMonth(ms, loc)}, ${timeOfDay(ms)}`;
}

function dayMonth(ms: number, loc: string): string {
  const at = new Date(ms);
  return `${at.getDate()} ${months[dutch(loc) ? "nl" : "en"][at.getMonth()]}`;
}

/** The time of day, hours and minutes, on the 24-hour clock both locales use ("14:05"). */
export function timeOfDay(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const at = new Date(ms);
  return `${twoDigits(at.getHours())}:${twoDigits(at.getMinutes())}`;
}

export function duration(startMs: number, endMs: number | null): string {
  return endMs === null ? "—" : clock((endMs - startMs) / 1000);
}

export function shortHash(sha256: string | null): string {
  return sha256 ? `${sha256.slice(0, 12)}…` : "—";
}

/** A day in local time as YYYY-MM-DD (what a date field holds), `daysBack` days before `at`. */
export function localDay(at: Date, daysBack = 0): string {
  const day = new Date(at.getFullYear(), at.getMonth(), at.getDate() - daysBack);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${day.getFullYear()}-${two(day.getMonth() + 1)}-${two(day.getDate())}`;
}

/** The template unattended backups are named by unless the office chose another (kept in
 * step with kluis-profiles' `file_names::DEFAULT_TEMPLATE`). */
export const DEFAULT_FILE_NAME = "{klant} {date} {time}";

/** What `template` names a backup of `klant` made at `at` (local time), as the Rust side
 * does: `{date}` YYYY-MM-DD, `{time}` HHmm — for the preview under the field. */
export function fileNamePreview(template: string, klant: string, at: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  const date = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
  const time = `${two(at.getHours())}${two(at.getMinutes())}`;
  return `${template.trim().replaceAll("{date}", date).replaceAll("{time}", time).replaceAll("{klant}", klant)}.zip`;
}
