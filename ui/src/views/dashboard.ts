// The dashboard: every klant in one table — the age of its last verified backup (marked when
// overdue for its plan), its last result and reason, next due, size and its last 30 days —
// sortable by each column, filterable to those that need attention. A klant's name opens it.
import { h } from "preact";
import { memo } from "preact/compat";
import * as actions from "../actions";
import type { DayMark, KlantStatus } from "../bindings";
import { ago, arrange, daysSummary, needsAttention, nextSort, type SortKey } from "../dashboard";
import { errorTitle } from "../errors";
import { bytes, dateTime } from "../format";
import { locale, t, type Key } from "../i18n";
import { plansPaused, profileName, retryingProfiles, runningProfiles, state } from "../state";
import { ResumedList } from "./backup";
import { Check } from "./profiles";

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
const CELL = 6;
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
    return h(
      "span",
      { class: "status failed" },
      errorTitle(error),
      h("br", {}),
      h("small", { class: "reason", "data-test": "dash-reason", title: error.message }, dateTime(k.last_error.at_ms, locale()), error.message ? ` — ${error.message}` : ""),
    );
  }
  if (k.last_success_ms !== null) return h("span", { class: "status ok" }, t("statusSaved"));
  return h("span", { class: "status" }, t("dashNever"));
}

function Next({ k }: { k: KlantStatus }) {
  if (k.next_due_ms !== null) return dateTime(k.next_due_ms, locale());
  return k.plan?.paused ? t("dashPaused") : t("dashManual");
}

/** One klant's row. Memoised: a row renders again only when its klant's standing, name,
 * running state or the minute changes — not for every other klant's event during a Backup
 * all (200 rows rendered per event kept the window from answering). The texts it shows
 * follow the language by themselves (`t` reads it). */
const Row = memo(function Row({ k, name, minute, running }: { k: KlantStatus; name: string; minute: number; running: boolean }) {
  const attention = needsAttention(k);
  const now = minute * 60_000;
  return h(
    "tr",
    { class: attention ? "attention" : undefined, "data-test": `dash-${k.profile_id}` },
    h("th", { scope: "row" }, h("button", { class: "link", onClick: () => void actions.selectProfile(k.profile_id) }, name)),
    h(
      "td",
      { class: k.overdue ? "age overdue" : "age", "data-test": "dash-age" },
      k.last_success_ms !== null ? ago(k.last_success_ms, now) : t("dashNever"),
      k.overdue ? h("span", { class: "tag bad" }, t("dashOverdue")) : null,
    ),
    h("td", { "data-test": "dash-result" }, h(Result, { k, running })),
    h("td", {}, h(Next, { k })),
    h("td", { class: "num" }, bytes(k.last_success_bytes)),
    h("td", {}, h(Strip, { days: k.days })),
  );
});

/** The table of every klant, its filter and Backup all. */
function KlantTable() {
  const all = state.dashboard.value;
  const attentionOnly = state.attentionOnly.value;
  const now = state.now.value;
  const running = runningProfiles.value;
  const rows = arrange(all, state.dashboardSort.value, attentionOnly, (k) => profileName(k.profile_id));
  const waiting = all.filter(needsAttention).length;
  return h(
    "section",
    { class: "card dashboard", "aria-labelledby": "dash-title", "data-test": "dashboard" },
    h("h2", { id: "dash-title" }, t("dashTitle")),
    h(
      "div",
      { class: "row" },
      h(Check, { test: "attention-only", label: t("dashAttentionOnly", { count: String(waiting) }), checked: attentionOnly, onToggle: (on) => (state.attentionOnly.value = on) }),
      h("button", { class: "secondary", "data-test": "dash-backup-all", disabled: state.queued.value.size > 0, onClick: () => void actions.backupAll() }, t("backupAll")),
    ),
    rows.length === 0
      ? h("p", { class: "note", "data-test": "dash-all-well" }, attentionOnly ? t("dashAllWell") : t("dashEmpty"))
      : h(
          "table",
          { class: "dash" },
          h("caption", { class: "visually-hidden" }, t("dashCaption")),
          h("thead", {}, h("tr", {}, columns.map(([column, label]) => h(Header, { key: column, column, label })), h("th", { scope: "col", class: "col-days" }, t("dashDays")))),
          h("tbody", {}, rows.map((k) => h(Row, { key: k.profile_id, k, name: profileName(k.profile_id), minute: Math.floor(now / 60_000), running: running.has(k.profile_id) || k.running }))),
        ),
  );
}

/** The first screen with more than one klant: backups resumed at start, then every klant. */
export function Dashboard() {
  return h("div", {}, h(PausedBanner, {}), h(ResumedList, {}), h(KlantTable, {}));
}

/** While every plan is paused ("Pause plans", in the tray or Settings): said, with Resume. */
function PausedBanner() {
  if (!plansPaused.value) return null;
  return h(
    "div",
    { class: "card paused", role: "status", "data-test": "plans-paused" },
    h("p", {}, t("plansPausedNote")),
    h("button", { "data-test": "resume-plans", onClick: () => void actions.setPlansPaused(false) }, t("resumePlans")),
  );
}
