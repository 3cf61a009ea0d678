// The dashboard: every klant in one table — the age of its last verified backup (marked when
// overdue for its plan), its last result and reason, next due, size and its last 30 days —
// sortable by each column, filterable to those that need attention. A klant's name opens it.
import { NoKitBanner } from "./recovery";
import { batch, computed } from "@preact/signals";
import { h } from "preact";
import { memo } from "preact/compat";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { backupAll, cancelAll, setPlansPaused, verifyBackups } from "../actions/dashboard";
import { exportKlanten } from "../actions/imports";
import { pick, pickAll, setOrder } from "../actions/many";
import { selectProfile } from "../actions/session";
import type { DayMark, KlantStatus } from "../bindings";
import { ago, arrange, daysSummary, lacksCopies, lastBackup, needsAttention, nextSort, rowWindow, type SortKey, type TableView } from "../dashboard";
import { errorTitle } from "../errors";
import { bytes, dateTime, shortDateTime } from "../format";
import { locale, t, type Key } from "../i18n";
import { foundIds, narrowed } from "../find";
import { plansPaused, profileName, profileTags, retryingProfiles, runningProfiles, state } from "../state";
import { ResumedList } from "./backup";
import { OfficeCard } from "./office";
import { ManyPanel, PickedBar } from "./many";
import { Check } from "./fields";

const columns: [SortKey, Key][] = [
  ["klant", "dashKlant"],
  ["age", "dashAge"],
  ["result", "dashResult"],
  ["next", "dashNext"],
  ["size", "dashSize"],
];

/** A column header: a button that sorts by it, `aria-sort` telling which way. */
function Header({ column, label }: { column: SortKey; label: Key }) {
  const sort = state.dashboardSort.value;
  const sorted = sort.key === column;
  return h(
    "th",
    { scope: "col", class: `col-${column}`, "aria-sort": sorted ? (sort.ascending ? "ascending" : "descending") : undefined },
    h(
      "button",
      { class: "sort", "data-test": `sort-${column}`, onClick: () => (state.dashboardSort.value = nextSort(sort, column)) },
      t(label),
      h("span", { "aria-hidden": "true" }, sorted ? (sort.ascending ? " ▲" : " ▼") : ""),
    ),
  );
}

const markColour: Record<DayMark, string> = { saved: "var(--ok)", failed: "var(--bad)", missed: "var(--focus)", free: "var(--line)" };
/** Width of a day's cell and the gap after it, in px. */
const CELL = 5;
const GAP = 1;

/** The strip's picture: a cell per day, oldest first, painted as one gradient. */
export function stripImage(days: readonly DayMark[]): string {
  const stops = days.flatMap((mark, i) => {
    const x = i * (CELL + GAP);
    return [`${markColour[mark]} ${x}px ${x + CELL}px`, `transparent ${x + CELL}px ${x + CELL + GAP}px`];
  });
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

/** The last 30 days (oldest first), said in words to a screen reader and in its tooltip.
 * One element painted with a gradient, not a cell element per day: 30 elements in each of
 * 200 rows made the dashboard slow to lay out and to render again. */
function Strip({ days }: { days: DayMark[] }) {
  const summary = daysSummary(days);
  return h("span", {
    class: "strip",
    role: "img",
    "aria-label": summary,
    title: summary,
    style: { width: `${Math.max(0, days.length * (CELL + GAP) - GAP)}px`, backgroundImage: stripImage(days) },
  });
}

function Result({ k, running }: { k: KlantStatus; running: boolean }) {
  if (running) return h("span", { class: "status" }, t(retryingProfiles.value.has(k.profile_id) ? "retryingTag" : "backupRunning"));
  if (k.last_error) {
    const error = { code: k.last_error.code, message: k.last_error.message };
    const when = dateTime(k.last_error.at_ms, locale());
    return h(
      "span",
      { class: "status failed", title: errorTitle(error) },
      errorTitle(error),
      // The reason first (one line, cut): when it failed is in its tooltip.
      h("small", { class: "reason", "data-test": "dash-reason", title: error.message ? `${when} — ${error.message}` : when }, error.message || when),
    );
  }
  if (k.damaged > 0) {
    const title = t("dashDamaged", { count: String(k.damaged) });
    return h("span", { class: "status failed", title }, title, h("small", { class: "reason", "data-test": "dash-reason" }, t("dashDamagedReason")));
  }
  if (k.restore_test_failed !== null) {
    const title = t("dashRestoreFailed");
    return h("span", { class: "status failed", title }, title, h("small", { class: "reason", "data-test": "dash-reason", title: k.restore_test_failed }, k.restore_test_failed || t("dashRestoreFailedReason")));
  }
  if (k.copies && lacksCopies(k)) {
    const title = t("dashCopies", { made: String(k.copies.made), wanted: String(k.copies.wanted) });
    return h("span", { class: "status failed", title }, title, h("small", { class: "reason", "data-test": "dash-reason" }, k.copies.last_error ?? t("dashCopiesWaiting")));
  }
  if (k.restore_test_overdue) {
    const title = t("dashRestoreLate");
    return h("span", { class: "status", title }, title, h("small", { class: "reason", "data-test": "dash-reason" }, t("dashRestoreLateReason")));
  }
  if (k.office_backup !== null) {
    // Another PC of the office made the last backup: whose desk its file and copies are at.
    const title = t("dashElsewhere", { pc: k.office_backup.by });
    const reason = t("dashElsewhereReason", { when: dateTime(k.office_backup.at_ms, locale()) });
    return h("span", { class: "status ok", title }, title, h("small", { class: "reason", "data-test": "dash-reason", title: reason }, reason));
  }
  if (k.last_success_ms !== null) return h("span", { class: "status ok" }, t("statusSaved"));
  return h("span", { class: "status" }, t("dashNever"));
}

/** The report of "Verify backups": under way, all intact, or each backup that cannot be
 * relied on (its klant, when it was saved, what was found and where it is). */
function VerifyResult() {
  const result = state.verifying.value;
  if (result === null) return null;
  if (result === "verifying") return h("p", { role: "status", "data-test": "verify-running" }, t("verifying"));
  if ("error" in result) return h("div", { class: "error", role: "alert" }, h("strong", {}, t("verifyFailed")), h("p", {}, result.error.message));
  const copiesLine = result.copies_checked > 0 ? h("p", { "data-test": "verify-copies" }, t("verifyCopies", { count: String(result.copies_checked), problems: String(result.copy_problems.length) })) : null;
  if (result.problems.length === 0 && result.copy_problems.length === 0) {
    return h("div", {}, h("p", { class: "success", role: "status", "data-test": "verify-ok" }, t("verifyAllIntact", { count: String(result.verified), size: bytes(result.bytes) })), copiesLine);
  }
  return h(
    "div",
    { class: "error", role: "alert", "data-test": "verify-problems" },
    result.problems.length > 0 ? h("p", {}, t("verifyProblems", { count: String(result.problems.length), total: String(result.verified) })) : h("p", {}, t("verifyAllIntact", { count: String(result.verified), size: bytes(result.bytes) })),
    copiesLine,
    h(
      "ul",
      {},
      result.copy_problems.map((c) =>
        h(
          "li",
          { key: `${c.target}-${c.location ?? ""}`, "data-test": "verify-copy-problem" },
          h("strong", {}, profileName(c.profile)),
          ` · ${t("verifyCopyOn", { target: c.target })} · `,
          h("span", { class: "status failed" }, t(`finding_${c.check.finding}`)),
          h("br", {}),
          h("span", { class: "path" }, c.location ?? ""),
          c.check.detail ? h("small", { class: "reason" }, ` — ${c.check.detail}`) : null,
        ),
      ),
    ),
    h(
      "ul",
      {},
      result.problems.map((e) => {
        const check = e.last_check;
        return h(
          "li",
          { key: e.id, "data-test": "verify-problem" },
          h("strong", {}, profileName(e.profile)),
          ` · ${dateTime(e.finished_at_ms ?? e.started_at_ms, locale())} · `,
          h("span", { class: "status failed" }, check ? t(`finding_${check.finding}`) : ""),
          h("br", {}),
          h("span", { class: "path" }, e.path ?? ""),
          check?.detail ? h("small", { class: "reason" }, ` — ${check.detail}`) : null,
        );
      }),
    ),
  );
}

/** Clears the search and the tag: every klant shown again. */
function showAll(): void {
  batch(() => {
    state.find.value = "";
    state.tagFilter.value = null;
  });
}

/** Where Export klanten… wrote the list, or why it could not. */
function Exported() {
  const done = state.exported.value;
  if (done === null) return null;
  if ("error" in done) return h("div", { class: "error", role: "alert" }, h("strong", {}, t("exportFailed")), h("p", {}, done.error.message));
  return h("p", { class: "success", role: "status", "data-test": "export-done" }, t("exportDone", { path: done.path }));
}

/** Its last backup's copies off this computer: made of wanted (— without copy targets),
 * marked when one is missing, the reason in its tooltip. */
function CopiesCell({ k }: { k: KlantStatus }) {
  if (!k.copies) return h("span", { class: "note" }, "—");
  const short = lacksCopies(k);
  return h("span", { class: short ? "status failed" : "status ok", title: k.copies.last_error ?? (short ? t("dashCopiesWaiting") : "") }, `${k.copies.made}/${k.copies.wanted}`);
}

function Next({ k }: { k: KlantStatus }) {
  if (k.next_due_ms === null) return k.plan?.paused ? t("dashPaused") : t("dashManual");
  const whole = dateTime(k.next_due_ms, locale());
  return h("span", { class: "clamp", title: whole }, shortDateTime(k.next_due_ms, locale()));
}

/** One klant's row, of the same height as every other (its texts are cut to two lines, each
 * whole in its tooltip: the table places rows by arithmetic). Memoised: a row renders again
 * only when its klant's standing, place, name, running state or the minute changes — not for
 * every other klant's event during a Backup all (200 rows rendered per event kept the window
 * from answering). The texts it shows follow the language by themselves (`t` reads it). */
const Row = memo(function Row({ k, index, name, tags, minute, running, picked }: { k: KlantStatus; index: number; name: string; tags: string; minute: number; running: boolean; picked: boolean }) {
  const attention = needsAttention(k);
  const now = minute * 60_000;
  return h(
    "tr",
    // Its place in the whole table (the header row is 1): only the rows in view are drawn.
    { class: attention ? "klant attention" : "klant", "aria-rowindex": index + 2, "data-test": `dash-${k.profile_id}` },
    h(
      "td",
      { class: "pick" },
      h("input", {
        type: "checkbox",
        "data-test": `pick-${k.profile_id}`,
        "aria-label": t("manyPick", { name }),
        checked: picked,
        onClick: (e: MouseEvent) => pick(k.profile_id, (e.target as HTMLInputElement).checked, e.shiftKey),
      }),
    ),
    h(
      "th",
      { scope: "row" },
      h("button", { class: "link", title: name, onClick: () => void selectProfile(k.profile_id) }, h("span", { class: tags ? "clamp one" : "clamp" }, name)),
      tags ? h("small", { class: "tags", title: tags, "data-test": "dash-tags" }, tags) : null,
    ),
    h(
      "td",
      { class: k.overdue ? "age overdue" : "age", "data-test": "dash-age" },
      lastBackup(k) !== null ? ago(lastBackup(k)!, now) : t("dashNever"),
      k.overdue ? h("span", { class: "tag bad" }, t("dashOverdue")) : null,
    ),
    h("td", { "data-test": "dash-result" }, h(Result, { k, running })),
    h("td", { class: "copies", "data-test": "dash-copies" }, h(CopiesCell, { k })),
    h("td", {}, h(Next, { k })),
    h("td", { class: "num size" }, bytes(k.last_success_bytes)),
    h("td", {}, h(Strip, { days: k.days })),
  );
});

/** Where the table's body is on screen, measured again (in the next frame) when the page
 * scrolls, the window resizes or the table renders; kept only when it changes which rows are
 * drawn (`rowWindow`), so scrolling within the drawn rows renders nothing. */
function useTableView(count: number) {
  const body = useRef<HTMLTableSectionElement>(null);
  const [view, setView] = useState<TableView>({ bodyTop: 0, viewport: 0, rowHeight: 0 });
  const latest = useRef({ count, view });
  latest.current = { count, view };
  const frame = useRef(0);
  const measure = () => {
    frame.current = 0;
    const el = body.current;
    if (!el) return;
    const row = el.querySelector<HTMLElement>("tr.klant");
    const next = { bodyTop: el.getBoundingClientRect().top, viewport: window.innerHeight, rowHeight: row?.offsetHeight ?? latest.current.view.rowHeight };
    const [was, now] = [rowWindow(latest.current.count, latest.current.view), rowWindow(latest.current.count, next)];
    if (was.first !== now.first || was.end !== now.end || next.rowHeight !== latest.current.view.rowHeight) setView(next);
  };
  const soon = () => {
    if (!frame.current) frame.current = requestAnimationFrame(measure);
  };
  useLayoutEffect(soon);
  useLayoutEffect(() => {
    window.addEventListener("scroll", soon, { passive: true });
    window.addEventListener("resize", soon);
    return () => {
      window.removeEventListener("scroll", soon);
      window.removeEventListener("resize", soon);
      cancelAnimationFrame(frame.current);
    };
  }, []);
  return { body, view, ...rowWindow(count, view) };
}

/** Stands in for the rows not drawn, above or below those in view, so the page scrolls as
 * over the whole table. Hidden from screen readers, which learn the table's size from
 * `aria-rowcount`. */
function spacer(height: number, side: string) {
  return height > 0 ? h("tr", { key: `spacer-${side}`, class: "spacer", "aria-hidden": "true", style: { height: `${height}px` } }, h("td", { colSpan: columns.length + 3 })) : null;
}

/** Every klant's standing, sorted as chosen (and only those that need attention, when asked). */
const arranged = computed(() => arrange(state.dashboard.value, state.dashboardSort.value, state.attentionOnly.value, (k) => profileName(k.profile_id)));

/** The table of every klant, its filter and Backup all. With many klanten only the rows in
 * view are drawn (see `rowWindow`). */
function KlantTable() {
  const every = state.dashboard.value;
  const ids = foundIds.value;
  const all = narrowed.value ? every.filter((k) => ids.has(k.profile_id)) : every;
  const attentionOnly = state.attentionOnly.value;
  const now = state.now.value;
  const running = runningProfiles.value;
  // Sorted once per change of the standings, the order or the names; a keystroke in the
  // search only filters what is sorted (1,000 klanten sorted per keystroke took ~30 ms).
  const rows = narrowed.value ? arranged.value.filter((k) => ids.has(k.profile_id)) : arranged.value;
  const { body, view, first, end } = useTableView(rows.length);
  const picked = state.picked.value;
  const shownIds = rows.map((k) => k.profile_id);
  setOrder(shownIds);
  const allPicked = shownIds.length > 0 && shownIds.every((id) => picked.has(id));
  const waiting = all.filter(needsAttention).length;
  return h(
    "section",
    { class: "card dashboard", "aria-labelledby": "dash-title", "data-test": "dashboard" },
    h("h2", { id: "dash-title" }, t("dashTitle")),
    h(
      "div",
      { class: "row" },
      h(Check, { test: "attention-only", label: t("dashAttentionOnly", { count: String(waiting) }), checked: attentionOnly, onToggle: (on) => (state.attentionOnly.value = on) }),
      // The one Backup all (and, while any backup runs, Cancel all): where every klant is.
      h("button", { class: "secondary", "data-test": "backup-all", disabled: state.queued.value.size > 0, onClick: () => void backupAll() }, t("backupAll")),
      state.queued.value.size > 0 || running.size > 0 ? h("button", { class: "secondary", "data-test": "cancel-all", onClick: () => void cancelAll() }, t("cancelAll")) : null,
      h("button", { class: "secondary", "data-test": "dash-verify", disabled: state.verifying.value === "verifying", onClick: () => void verifyBackups() }, t("verifyBackups")),
      h("button", { class: "secondary", "data-test": "export-klanten", onClick: () => void exportKlanten() }, t("exportKlanten")),
    ),
    narrowed.value
      ? h(
          "p",
          { class: "note", role: "status", "data-test": "dash-narrowed" },
          t("dashShowing", { count: String(all.length), all: String(every.length) }),
          " ",
          h("button", { class: "link", "data-test": "dash-show-all", onClick: showAll }, t("dashShowAll")),
        )
      : null,
    h(Exported, {}),
    h(PickedBar, {}),
    h(ManyPanel, {}),
    h(VerifyResult, {}),
    rows.length === 0
      ? h("p", { class: "note", "data-test": "dash-all-well" }, attentionOnly ? t("dashAllWell") : t("dashEmpty"))
      : h(
          "table",
          { class: "dash", "aria-rowcount": rows.length + 1 },
          h("caption", { class: "visually-hidden" }, t("dashCaption")),
          h(
            "thead",
            {},
            h(
              "tr",
              { "aria-rowindex": 1 },
              h(
                "th",
                { scope: "col", class: "col-pick" },
                h("input", { type: "checkbox", "data-test": "pick-all", "aria-label": t("manyPickAll"), checked: allPicked, onClick: () => pickAll(shownIds) }),
              ),
              columns.slice(0, 3).map(([column, label]) => h(Header, { key: column, column, label })),
              h("th", { scope: "col", class: "col-copies" }, t("dashCopiesColumn")),
              columns.slice(3).map(([column, label]) => h(Header, { key: column, column, label })),
              // (The strip shows 14 days where the window is narrow: see style.css.)
              h("th", { scope: "col", class: "col-days" }, h("span", { class: "days-30" }, t("dashDays")), h("span", { class: "days-14" }, t("dashDays14"))),
            ),
          ),
          h(
            "tbody",
            { ref: body },
            spacer(first * view.rowHeight, "top"),
            rows.slice(first, end).map((k, i) =>
              h(Row, { key: k.profile_id, k, index: first + i, name: profileName(k.profile_id), tags: profileTags(k.profile_id), minute: Math.floor(now / 60_000), running: running.has(k.profile_id) || k.running, picked: picked.has(k.profile_id) }),
            ),
            spacer((rows.length - end) * view.rowHeight, "bottom"),
          ),
        ),
  );
}

/** The first screen with more than one klant: backups resumed at start, then every klant. */
export function Dashboard() {
  return h("div", {}, h(DemoBanner, {}), h(PausedBanner, {}), h(NoKitBanner, {}), h(OfficeCard, {}), h(ResumedList, { onDashboard: true }), h(KlantTable, {}));
}

/** In the demo app: where its files are, and what there is to see. */
function DemoBanner() {
  const folder = state.demoFolder.value;
  if (!state.demo.value || folder === null) return null;
  return h("div", { class: "card demo-note", role: "note", "data-test": "demo-folder" }, h("p", {}, t("demoFolderNote", { folder })));
}

/** While every plan is paused ("Pause plans", in the tray or Settings): said, with Resume. */
function PausedBanner() {
  if (!plansPaused.value) return null;
  return h(
    "div",
    { class: "card paused", role: "status", "data-test": "plans-paused" },
    h("p", {}, t("plansPausedNote")),
    h("button", { "data-test": "resume-plans", onClick: () => void setPlansPaused(false) }, t("resumePlans")),
  );
}
