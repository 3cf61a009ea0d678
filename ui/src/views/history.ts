// The history table: when, size and duration, where (and its SHA-256), status; retry, open
// folder, contents, test restore.
import { h } from "preact";
import { showBackup, startBackup } from "../actions/backup";
import { openContents, testRestore } from "../actions/restore";
import { editReport, exportReport, filterHistory } from "../actions/history";
import type { UiError } from "../api";
import type { HistoryEntry, ReportFormat, RoundTest } from "../bindings";
import { copyText } from "../dom";
import { errorTitle } from "../errors";
import { bytes, dateTime, duration, shortHash } from "../format";
import { locale, t } from "../i18n";
import { displayName, profileName, state } from "../state";
import { ContentsPanel } from "./contents";

/** Why a backup failed, in the UI's language (from its error code); the service's or
 * system's own words behind "Details". */
function Reason({ e }: { e: HistoryEntry }) {
  const error: UiError = { code: e.error_code ?? "internal", message: e.error_message ?? "" };
  return h(
    "small",
    { "data-test": "history-reason" },
    errorTitle(error),
    error.message ? h("details", {}, h("summary", {}, t("details")), h("span", {}, error.message)) : null,
  );
}

function Row({ e }: { e: HistoryEntry }) {
  // A cancelled or discarded backup is the user's choice, not a failure, and left no file:
  // no size, hash or path that does not exist.
  const cancelled = e.stage === "failed" && e.error_code === "cancelled";
  const status = cancelled
    ? h("span", { class: "status" }, t("statusCancelled"))
    : e.removed
      ? h("span", { class: "status", "data-test": "history-removed" }, t("historyRemoved"), h("br", {}), h("small", { title: dateTime(e.removed.at_ms, locale()) }, t("historyRemovedBy", { rule: e.removed.rule })))
      : e.stage === "saved" && e.last_check && e.last_check.finding !== "intact"
        ? h("span", { class: "status failed", "data-test": "history-check" }, t(`finding_${e.last_check.finding}`), e.last_check.detail ? h("br", {}) : null, e.last_check.detail ? h("small", {}, e.last_check.detail) : null)
        : e.stage === "saved"
          ? h("span", { class: "status ok" }, t("statusSaved"))
      : e.stage === "failed"
        ? h("span", { class: "status failed" }, t("statusFailed"), h("br", {}), h(Reason, { e }))
        : h("span", { class: "status" }, t("statusRunning"));
  const hash = h("span", {}, "SHA-256 ", h("code", { title: e.sha256 ?? "" }, shortHash(e.sha256)), " ", h("button", { class: "icon", "aria-label": `${t("copy")} SHA-256`, onClick: () => void copyText(e.sha256 ?? "") }, t("copy")));
  const testing = state.restoreTest.value?.historyId === e.id && state.restoreTest.value.result === "testing";
  const action =
    e.stage === "saved" && !e.removed
      ? h(
          "span",
          {},
          h("button", { class: "link", onClick: () => void showBackup(e.id, false) }, t("openFolder")),
          h("br", {}),
          h("button", { class: "link", "data-test": "history-contents", onClick: () => void openContents(e.id) }, t("contentsOpen")),
          h("br", {}),
          h("button", { class: "link", "data-test": "history-test-restore", disabled: testing, onClick: () => void testRestore(e.id) }, t("testRestore")),
        )
      : e.stage === "failed" && e.profile === state.selected.value
        ? h("button", { class: "link", onClick: () => void startBackup() }, t("retry"))
        : "";
  // Five columns, so that the table fits the card at the window's usual width: how long it
  // took under its size, its SHA-256 under its path.
  return h(
    "tr",
    { "data-test": "history-row", "data-stage": cancelled ? "cancelled" : e.stage },
    h("td", { class: "when" }, dateTime(e.started_at_ms, locale()), h("br", {}), h("small", {}, profileName(e.profile))),
    h("td", { class: "size" }, cancelled ? "—" : bytes(e.bytes), h("br", {}), h("small", { title: t("colDuration") }, duration(e.started_at_ms, e.finished_at_ms))),
    h("td", { class: "path" }, (!cancelled && e.path) || "—", e.sha256 && !cancelled ? h("br", {}) : null, e.sha256 && !cancelled ? h("small", { class: "hash" }, hash) : null),
    h("td", {}, status),
    h("td", {}, action),
  );
}

/** The report for auditors: a period, a format, and "Export report…" (the save dialog is
 * native, opened by the Rust side); then where it went, or why not. */
function ReportForm() {
  const draft = state.reportDraft.value;
  const result = state.reportExport.value;
  const exporting = result === "exporting";
  const day = (key: "from" | "to") =>
    h(
      "div",
      { class: "field" },
      h("label", { for: `report-${key}` }, t(key === "from" ? "reportFrom" : "reportTo")),
      h("input", { id: `report-${key}`, type: "date", value: draft[key], required: true, onInput: (ev: Event) => editReport({ [key]: (ev.target as HTMLInputElement).value }) }),
    );
  return h(
    "details",
    { class: "report", "data-test": "report" },
    h("summary", {}, t("reportTitle")),
    h("p", {}, h("small", { class: "note" }, t("reportHint"))),
    h(
      "div",
      { class: "row" },
      day("from"),
      day("to"),
      h(
        "div",
        { class: "field" },
        h("label", { for: "report-format" }, t("reportFormat")),
        h(
          "select",
          { id: "report-format", value: draft.format, onChange: (ev: Event) => editReport({ format: (ev.target as HTMLSelectElement).value as ReportFormat }) },
          h("option", { value: "csv" }, t("reportCsv")),
          h("option", { value: "printable" }, t("reportPrintable")),
        ),
      ),
    ),
    h("button", { class: "secondary", "data-test": "report-export", disabled: exporting || !draft.from || !draft.to, onClick: () => void exportReport() }, t("exportReport")),
    result === null
      ? null
      : exporting
        ? h("p", { role: "status" }, t("reportExporting"))
        : "error" in result
          ? h("div", { class: "error", role: "alert", "data-test": "report-error" }, h("strong", {}, t("reportFailed")), h("p", {}, result.error.message))
          : h("p", { class: "success", role: "status", "data-test": "report-done" }, t("reportExported", { count: String(result.backups), path: result.path })),
  );
}

/** The last Test restore's result: under way, passed, failed (what did not restore), or why it
 * could not run. */
function RestoreTested() {
  const test = state.restoreTest.value;
  if (!test) return null;
  const result = test.result;
  if (result === "testing") return h("p", { role: "status", "data-test": "restore-test" }, t("testRestoreRunning"));
  if ("error" in result) return h("div", { class: "error", role: "alert", "data-test": "restore-test" }, result.error.message);
  return h("div", { "data-test": "restore-test" }, result.map((test, i) => h(RoundTested, { key: i, test })));
}

/** One test of a Test restore: the saved file's, or a copy's (named). */
function RoundTested({ test }: { test: RoundTest }) {
  const r = test.record;
  const of = test.copy_on ? `${t("testRestoreOfCopy", { target: test.copy_on })} ` : "";
  const counts = { entries: String(r.entries), size: bytes(r.bytes), seconds: (r.took_ms / 1000).toFixed(1) };
  return r.passed
    ? h("p", { class: "success", role: "status" }, of, t("testRestorePassed", counts))
    : h("div", { class: "error", role: "alert" }, of, t("testRestoreFailed"), r.detail ? h("p", {}, r.detail) : null);
}

const headers = ["colWhen", "colSize", "colWhere", "colStatus", "colActions"] as const;

export function HistoryPanel() {
  const history = state.history.value;
  return h(
    "section",
    { class: "card", "aria-labelledby": "history-title" },
    h("h2", { id: "history-title" }, t("tabHistory")),
    h(
      "div",
      { class: "field inline" },
      h("label", { for: "history-filter" }, t("historyFilter")),
      h(
        "select",
        { id: "history-filter", value: state.historyFilter.value ?? "", onChange: (ev: Event) => void filterHistory((ev.target as HTMLSelectElement).value || null) },
        h("option", { value: "" }, t("allProfiles")),
        state.profiles.value.map((p) => h("option", { key: p.id, value: p.id }, displayName(p))),
      ),
    ),
    h(ReportForm, {}),
    h(RestoreTested, {}),
    h(ContentsPanel, {}),
    history.length === 0
      ? h("p", {}, t("noHistory"))
      : h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { "data-test": "history" },
            h("thead", {}, h("tr", {}, headers.map((k) => h("th", { key: k, scope: "col" }, t(k))))),
            h("tbody", {}, history.map((e) => h(Row, { key: e.id, e }))),
          ),
        ),
  );
}
