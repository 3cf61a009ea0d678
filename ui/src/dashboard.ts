// The dashboard's logic, apart from its view: which klanten need attention, how the rows sort,
// and how a klant's age and days are said (in the UI's language).
import type { DayMark, KlantStatus } from "./bindings";
import { decimal, formatter } from "./format";
import { locale, t, type Key } from "./i18n";

export type SortKey = "klant" | "age" | "result" | "next" | "size";
export type Sort = { key: SortKey; ascending: boolean };

/** The dashboard opens on the klanten that need attention first, then by name. */
export const defaultSort: Sort = { key: "result", ascending: true };

/** A klant needs attention when its plan is overdue, its last backup failed, a kept backup is
 * damaged, or its last backup lacks a copy off this computer. */
export function needsAttention(k: KlantStatus): boolean {
  return k.overdue || k.last_error !== null || k.damaged > 0 || lacksCopies(k) || k.restore_test_failed !== null || k.restore_test_overdue;
}

/** When the klant was last backed up: by this PC (verified), or by another PC of the office
 * when that is later (the office hub said so); null when never. */
export function lastBackup(k: KlantStatus): number | null {
  const elsewhere = k.office_backup?.at_ms ?? null;
  if (k.last_success_ms === null || elsewhere === null) return k.last_success_ms ?? elsewhere;
  return Math.max(k.last_success_ms, elsewhere);
}

/** Its last backup is not on every copy target yet. */
export function lacksCopies(k: KlantStatus): boolean {
  return k.copies !== null && k.copies.made < k.copies.wanted;
}

/** Missing values (never saved, no plan, no size) sort after every known one, either way. */
function byNumber(a: number | null, b: number | null, ascending: boolean): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return ascending ? a - b : b - a;
}

const compare: Record<SortKey, (a: KlantStatus, b: KlantStatus, ascending: boolean, byName: (a: KlantStatus, b: KlantStatus) => number) => number> = {
  klant: (a, b, asc, byName) => (asc ? 1 : -1) * byName(a, b),
  // Ascending age: the oldest backup first (the one that worries most); never saved is oldest.
  age: (a, b, asc) => {
    const [x, y] = [lastBackup(a) ?? -Infinity, lastBackup(b) ?? -Infinity];
    return x === y ? 0 : (x < y) === asc ? -1 : 1;
  },
  result: (a, b, asc) => (asc ? 1 : -1) * (Number(needsAttention(b)) - Number(needsAttention(a))),
  next: (a, b, asc) => byNumber(a.next_due_ms, b.next_due_ms, asc),
  size: (a, b, asc) => byNumber(a.last_success_bytes, b.last_success_bytes, asc),
};

/** `rows` sorted by `sort` (ties by name, so the order never jumps), only those that need
 * attention when `attentionOnly`. */
export function arrange(rows: readonly KlantStatus[], sort: Sort, attentionOnly: boolean, names: (k: KlantStatus) => string): KlantStatus[] {
  const shown = attentionOnly ? rows.filter(needsAttention) : [...rows];
  // Each name looked up once and one collator for the language: a sort of 200 rows compares
  // about 1,500 times, and a collator made per comparison kept the window busy for tens of ms.
  const name = new Map(shown.map((k) => [k, names(k)]));
  const collator = formatter((l, o) => new Intl.Collator(l, o), "collator", locale(), {});
  const byName = (a: KlantStatus, b: KlantStatus) => collator.compare(name.get(a) ?? "", name.get(b) ?? "");
  return shown.sort((a, b) => compare[sort.key](a, b, sort.ascending, byName) || byName(a, b));
}

/** Clicking a column's header sorts by it; clicking it again turns the order around. */
export function nextSort(current: Sort, key: SortKey): Sort {
  return current.key === key ? { key, ascending: !current.ascending } : { key, ascending: true };
}

/** How long ago `ms` was, in words ("3 hours ago", "3 uur geleden"; one ahead "in 3 hours"):
 * minutes below an hour, hours below two days, then days, counted from the time elapsed — so
 * never "yesterday" or "eergisteren", which name a calendar day the count may not fall on (a
 * backup of Friday evening is "2 dagen geleden" on Monday morning, not Saturday's). */
export function ago(ms: number, now: number): string {
  if (!Number.isFinite(ms - now)) return "—";
  const minutes = Math.round((ms - now) / 60000);
  if (Math.abs(minutes) < 60) {
    return minutes === 0 ? t("agoJustNow") : relative(minutes, ["agoMinute", "agoMinutes", "inMinute", "inMinutes"]);
  }
  const hours = Math.round(minutes / 60);
  if (Math.abs(hours) < 48) return relative(hours, ["agoHour", "agoHours", "inHour", "inHours"]);
  return relative(Math.round(hours / 24), ["agoDays", "agoDays", "inDays", "inDays"]);
}

/** `n` units ago (below zero) or ahead: the text for one, or for more with `{n}` filled in. */
function relative(n: number, [one, many, inOne, inMany]: [Key, Key, Key, Key]): string {
  const count = Math.abs(n);
  if (count === 1) return t(n < 0 ? one : inOne);
  return t(n < 0 ? many : inMany, { n: decimal(count, 0, locale()) });
}

/** The strip in words, for screen readers: "Last 30 days: 20 saved, 2 failed, 1 missed". */
export function daysSummary(days: readonly DayMark[]): string {
  const count = (mark: DayMark) => days.filter((d) => d === mark).length;
  return t("daysSummary", { days: String(days.length), saved: String(count("saved")), failed: String(count("failed")), missed: String(count("missed")) });
}

/** `next` with each klant whose standing did not change kept as the same object as in
 * `before`, so its row (memoised) does not render again when the dashboard is read anew. */
export function keepUnchanged(before: readonly KlantStatus[], next: KlantStatus[]): KlantStatus[] {
  const old = new Map(before.map((k) => [k.profile_id, k]));
  return next.map((k) => {
    const was = old.get(k.profile_id);
    return was && JSON.stringify(was) === JSON.stringify(k) ? was : k;
  });
}

/** Rows drawn beyond those in view, on each side: the next row is there when Tab moves on or
 * the page scrolls a little, before the window catches up. */
export const OVERSCAN = 10;
/** Rows drawn before the table could be measured (its first render, or where nothing is laid
 * out): more than any screen shows. */
export const FIRST_ROWS = 40;

/** Where the dashboard's table body is on screen: its top relative to the viewport's top
 * (negative once scrolled past), the viewport's height, and the height of one row (every row
 * has the same; 0 when not measured). */
export type TableView = { bodyTop: number; viewport: number; rowHeight: number };

/** The rows `[first, end)` of `count` that are in view, and `OVERSCAN` more each side. A
 * table of 200 klanten draws about 40 rows instead of 200: in the webview laying out 200 rows
 * took longer than the 50 ms in which the window must answer (filtering made them anew). */
export function rowWindow(count: number, view: TableView): { first: number; end: number } {
  if (view.rowHeight <= 0) return { first: 0, end: Math.min(count, FIRST_ROWS) };
  const top = Math.max(0, Math.floor(-view.bodyTop / view.rowHeight));
  const bottom = Math.max(0, Math.ceil((view.viewport - view.bodyTop) / view.rowHeight));
  const first = Math.min(count, Math.max(0, top - OVERSCAN));
  return { first, end: Math.min(count, Math.max(first, bottom + OVERSCAN)) };
}
