import { beforeEach, describe, expect, it } from "vitest";
import type { KlantStatus } from "./bindings";
import { ago, arrange, daysSummary, FIRST_ROWS, keepUnchanged, lastBackup, needsAttention, nextSort, OVERSCAN, rowWindow } from "./dashboard";
import { setLanguage } from "./i18n";

const row = (id: string, change: Partial<KlantStatus> = {}): KlantStatus => ({
  profile_id: id, name: id, plan: null, last_success_ms: null, last_success_bytes: null, last_success_path: null,
  last_error: null, running: false, next_due_ms: null, overdue: false, days: [], damaged: 0, copies: null,
  restore_test_failed: null, restore_test_overdue: false, office_backup: null, ...change,
});
const names = (k: KlantStatus) => k.name;
const ids = (rows: KlantStatus[]) => rows.map((k) => k.profile_id);

describe("dashboard", () => {
  beforeEach(() => setLanguage("en"));

  it("needs attention for a last backup that is not on every copy target yet", () => {
    const copies = (made: number) => ({ made, wanted: 2, last_error: null });
    expect(needsAttention(row("a", { last_success_ms: 1, copies: copies(1) }))).toBe(true);
    expect(needsAttention(row("b", { last_success_ms: 1, copies: copies(2) }))).toBe(false);
    expect(needsAttention(row("c", { last_success_ms: 1 })), "no copy target set").toBe(false);
  });

  it("puts a klant never saved first when the oldest backups come first, and last the other way", () => {
    const rows = [row("b", { last_success_ms: 2 }), row("never"), row("a", { last_success_ms: 1 })];
    expect(ids(arrange(rows, { key: "age", ascending: true }, false, names))).toEqual(["never", "a", "b"]);
    expect(ids(arrange(rows, { key: "age", ascending: false }, false, names))).toEqual(["b", "a", "never"]);
  });

  it("counts another PC of the office's later backup as the klant's last, in its age and its order", () => {
    const elsewhere = (at_ms: number) => ({ office_backup: { at_ms, by: "RECEPTIE" } });
    expect(lastBackup(row("a", { last_success_ms: 1, ...elsewhere(5) }))).toBe(5);
    expect(lastBackup(row("b", { ...elsewhere(5) })), "never backed up here").toBe(5);
    expect(lastBackup(row("c", { last_success_ms: 7 }))).toBe(7);
    expect(lastBackup(row("d"))).toBe(null);
    const rows = [row("here", { last_success_ms: 3 }), row("there", { last_success_ms: 1, ...elsewhere(4) })];
    expect(ids(arrange(rows, { key: "age", ascending: true }, false, names))).toEqual(["here", "there"]);
  });

  it("puts an unknown next due or size last whichever way it sorts, ties by name", () => {
    const rows = [row("c"), row("b", { next_due_ms: 5 }), row("a", { next_due_ms: 5 }), row("d", { next_due_ms: 9 })];
    expect(ids(arrange(rows, { key: "next", ascending: true }, false, names))).toEqual(["a", "b", "d", "c"]);
    expect(ids(arrange(rows, { key: "next", ascending: false }, false, names))).toEqual(["d", "a", "b", "c"]);
  });

  it("filters to the klanten that are overdue or failed last", () => {
    const rows = [row("ok", { last_success_ms: 1 }), row("late", { overdue: true }), row("failed", { last_error: { at_ms: 1, code: "network", message: "" } })];
    expect(ids(arrange(rows, { key: "klant", ascending: true }, true, names))).toEqual(["failed", "late"]);
  });

  it("keeps a klant whose standing did not change as the same object when read anew", () => {
    const before = [row("a", { last_success_ms: 1 }), row("b")];
    const next = keepUnchanged(before, [row("a", { last_success_ms: 1 }), row("b", { last_success_ms: 2 }), row("c")]);
    expect(next[0], "unchanged: its row need not render again").toBe(before[0]);
    expect(next[1]).not.toBe(before[1]);
    expect(next[1].last_success_ms, "changed: the new standing").toBe(2);
    expect(ids(next)).toEqual(["a", "b", "c"]);
  });

  it("turns a column's order around on a second click", () => {
    expect(nextSort({ key: "age", ascending: true }, "age")).toEqual({ key: "age", ascending: false });
    expect(nextSort({ key: "age", ascending: false }, "size")).toEqual({ key: "size", ascending: true });
  });

  it("says ages and days in the UI's language", () => {
    const now = Date.UTC(2026, 10, 23, 12);
    expect(ago(now - 5 * 60_000, now)).toBe("5 minutes ago");
    expect(ago(now - 3 * 86_400_000, now)).toBe("3 days ago");
    setLanguage("nl");
    expect(ago(now - 3 * 3_600_000, now)).toBe("3 uur geleden");
    expect(ago(now - 2 * 86_400_000, now), "a count, not a calendar day's word (eergisteren)").toBe("2 dagen geleden");
    expect(ago(now + 2 * 86_400_000, now)).toBe("over 2 dagen");
    expect(ago(now - 1234 * 86_400_000, now), "a count with its thousands grouped").toBe("1.234 dagen geleden");
    expect(ago(now - 20_000, now)).toBe("zojuist");
    expect(ago(now + 60_000, now)).toBe("over 1 minuut");
    setLanguage("en");
    expect(ago(now - 20_000, now)).toBe("just now");
    expect(ago(now - 60 * 60_000, now), "an hour, not 60 minutes").toBe("1 hour ago");
    expect(ago(now - 47 * 3_600_000, now), "hours below two days").toBe("47 hours ago");
    expect(ago(now - 2 * 86_400_000, now)).toBe("2 days ago");
    expect(ago(now + 5 * 60_000, now)).toBe("in 5 minutes");
    setLanguage("nl");
    expect(daysSummary(["saved", "saved", "missed", "free"])).toBe("Laatste 4 dagen: 2 opgeslagen, 0 mislukt, 1 gemist");
  });

  it("draws the rows in view and OVERSCAN more each side; before the table is measured, the first FIRST_ROWS", () => {
    expect(rowWindow(200, { bodyTop: 0, viewport: 0, rowHeight: 0 }), "unmeasured").toEqual({ first: 0, end: FIRST_ROWS });
    expect(rowWindow(3, { bodyTop: 0, viewport: 0, rowHeight: 0 }), "a short table, unmeasured").toEqual({ first: 0, end: 3 });
    expect(rowWindow(3, { bodyTop: 300, viewport: 900, rowHeight: 50 }), "a short table: all of it").toEqual({ first: 0, end: 3 });
    // Rows of 50 px in a 900 px viewport.
    expect(rowWindow(200, { bodyTop: 300, viewport: 900, rowHeight: 50 }), "the body 300 px down: rows 0–11 in view").toEqual({ first: 0, end: 12 + OVERSCAN });
    expect(rowWindow(200, { bodyTop: -2000, viewport: 900, rowHeight: 50 }), "scrolled 2000 px into it: rows 40–57 in view").toEqual({ first: 40 - OVERSCAN, end: 58 + OVERSCAN });
    expect(rowWindow(200, { bodyTop: -9500, viewport: 900, rowHeight: 50 }), "at its end").toEqual({ first: 190 - OVERSCAN, end: 200 });
    expect(rowWindow(200, { bodyTop: 1000, viewport: 900, rowHeight: 50 }), "below the view: the first rows, ready").toEqual({ first: 0, end: OVERSCAN });
    expect(rowWindow(200, { bodyTop: -20000, viewport: 900, rowHeight: 50 }), "scrolled past it: nothing").toEqual({ first: 200, end: 200 });
  });
});
