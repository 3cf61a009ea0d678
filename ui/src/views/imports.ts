// Import klanten…: the file's rows previewed (which column holds what, changeable; the address
// and api key for rows without one; passwords from a password manager), then imported with
// each row's outcome as it ends, cancellable; at the end what happened to each row, and that
// the file still holds passwords.
import { h } from "preact";
import { applyDefaults, cancelImport, chooseVault, closeImport, runImport, setColumn, typeDefaults } from "../actions/imports";
import type { Action, Field, ImportRow, Outcome, RowOutcome } from "../bindings";
import { t, type Key } from "../i18n";
import { state, type Importing } from "../state";
import { TextInput } from "./fields";
import { describeRule, describeSchedule } from "./plan";

const fieldWords: Record<Field, Key> = {
  name: "field_name",
  username: "field_username",
  password: "field_password",
  api_key: "field_api_key",
  base_url: "field_base_url",
  plan: "field_plan",
  retention: "field_retention",
  tags: "field_tags",
};
const actionWords: Record<Action, Key> = { add: "importAdd", update: "importUpdate", skip: "importSkip" };
const outcomeWords: Record<Outcome, Key> = {
  would_add: "importAdd",
  would_update: "importUpdate",
  added: "outcome_added",
  updated: "outcome_updated",
  wrong_password: "outcome_wrong_password",
  unreachable: "outcome_unreachable",
  failed: "outcome_failed",
  skipped: "outcome_skipped",
  cancelled: "outcome_cancelled",
};

/** The outcomes shown: as they come while the import runs, all of them at its end. */
function outcomesOf(open: Importing): (RowOutcome | null)[] | null {
  const run = open.run;
  if (run === null || "error" in run) return null;
  return "outcomes" in run ? run.outcomes : run.result.outcomes;
}

/** Which column each field is read from, each changeable (before the import only). */
function Columns({ open }: { open: Importing }) {
  const header = open.preview.header;
  const locked = open.run !== null;
  return h(
    "section",
    { "aria-labelledby": "import-columns-title" },
    h("h3", { id: "import-columns-title" }, t("importColumnsTitle")),
    h("p", { class: "note" }, t("importColumnsNote")),
    h(
      "div",
      { class: "import-columns" },
      open.preview.columns.map(({ field, column }) =>
        h(
          "div",
          { key: field, class: "field" },
          h("label", { for: `import-col-${field}` }, t(fieldWords[field])),
          h(
            "select",
            {
              id: `import-col-${field}`,
              "data-test": `import-col-${field}`,
              disabled: locked,
              value: column === null ? "" : String(column),
              onChange: (e: Event) => {
                const v = (e.target as HTMLSelectElement).value;
                void setColumn(field, v === "" ? null : Number(v));
              },
            },
            h("option", { value: "" }, t("importNotRead")),
            header.map((name, i) => h("option", { key: i, value: String(i) }, name || t("importColumnN", { n: String(i + 1) }))),
          ),
        ),
      ),
    ),
  );
}

/** The address and api key for rows without their own, and passwords from a password manager. */
function Defaults({ open }: { open: Importing }) {
  const p = open.preview;
  return h(
    "form",
    {
      class: "import-defaults",
      "aria-labelledby": "import-defaults-title",
      onSubmit: (e: Event) => {
        e.preventDefault();
        void applyDefaults();
      },
    },
    h("h3", { id: "import-defaults-title" }, t("importDefaultsTitle")),
    h(TextInput, { id: "import-base-url", label: t("importBaseUrl"), hint: `${t("importBaseUrlHint")} ${t("baseUrlHint")}`, value: open.baseUrl, required: false, onValue: (baseUrl) => typeDefaults({ baseUrl }) }),
    h(TextInput, {
      id: "import-api-key",
      label: t("importApiKey"),
      hint: t("importApiKeyHint"),
      type: "password",
      required: false,
      placeholder: p.office_key ? t("importApiKeyGiven") : undefined,
      value: open.apiKey,
      onValue: (apiKey) => typeDefaults({ apiKey }),
    }),
    h("button", { type: "submit", class: "secondary", "data-test": "import-apply" }, t("importApply")),
    h("h3", {}, t("importVaultTitle")),
    h("p", { class: "note" }, t("importVaultNote")),
    p.vault ? h("p", { "data-test": "import-vault" }, t("importVaultRead", { count: String(p.vault_logins), file: p.vault })) : null,
    h("button", { type: "button", class: "secondary", "data-test": "import-choose-vault", onClick: () => void chooseVault() }, t("importVault")),
  );
}

/** One row: what it comes to (or came to), and why not. */
function RowLine({ row, outcome }: { row: ImportRow; outcome: RowOutcome | null | undefined }) {
  const what = outcome ? t(outcomeWords[outcome.outcome]) : outcome === null ? t("importWaiting") : t(actionWords[row.action]);
  const bad = outcome ? !["added", "updated"].includes(outcome.outcome) : row.action === "skip";
  const why = outcome ? outcome.why : row.problems.join("; ");
  return h(
    "tr",
    { "data-test": "import-row", class: bad ? "skipped" : undefined },
    h("td", { class: "num" }, String(row.line)),
    h(
      "th",
      { scope: "row" },
      row.name || "—",
      row.moves_from ? h("small", { class: "reason", "data-test": "import-moves" }, t("importMoves", { from: row.moves_from, to: row.base_url ?? "" })) : null,
    ),
    h("td", {}, row.username || "—"),
    h("td", {}, row.schedule ? describeSchedule(row.schedule) : "—", row.sets_retention ? h("small", { class: "reason" }, describeRule(row.retention)) : null),
    h("td", {}, row.tags.join(", ") || "—"),
    h("td", {}, row.has_password ? t("yes") : "—"),
    h("td", { "data-test": "import-outcome" }, h("span", { class: bad ? "status failed" : "status ok" }, what), why ? h("small", { class: "reason" }, why) : null),
  );
}

/** Counts for the line above the table. */
function counts(rows: ImportRow[], outcomes: (RowOutcome | null)[] | null): Record<string, number> {
  const count = (test: (i: number) => boolean) => rows.filter((_, i) => test(i)).length;
  if (outcomes === null) {
    return { add: count((i) => rows[i].action === "add"), update: count((i) => rows[i].action === "update"), skip: count((i) => rows[i].action === "skip") };
  }
  const is = (i: number, ...o: Outcome[]) => outcomes[i] !== null && o.includes(outcomes[i]!.outcome);
  return {
    done: count((i) => outcomes[i] !== null),
    added: count((i) => is(i, "added")),
    updated: count((i) => is(i, "updated")),
    failed: count((i) => is(i, "wrong_password", "unreachable", "failed", "cancelled", "skipped")),
  };
}

/** What the import does or did: the counts, the progress or the end, and each row. */
function Rows({ open }: { open: Importing }) {
  const rows = open.preview.rows;
  const outcomes = outcomesOf(open);
  const c = counts(rows, outcomes);
  const run = open.run;
  const running = run !== null && "outcomes" in run;
  const said = (n: number) => String(n);
  return h(
    "section",
    { "aria-labelledby": "import-rows-title" },
    h("h3", { id: "import-rows-title" }, t("importRowsTitle")),
    outcomes === null
      ? h("p", { "data-test": "import-summary" }, t("importSummary", { add: said(c.add), update: said(c.update), skip: said(c.skip) }))
      : running
        ? h(
            "p",
            { role: "status", "data-test": "import-progress" },
            t(run.cancelling ? "importCancelling" : "importRunning", { done: said(c.done), total: said(rows.length) }),
            " ",
            h("progress", { value: c.done, max: rows.length || 1 }),
          )
        : h("p", { role: "status", class: c.failed > 0 ? "" : "success", "data-test": "import-done" }, t("importDone", { added: said(c.added), updated: said(c.updated), failed: said(c.failed) })),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "import", "data-test": "import-rows" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            (["colLine", "dashKlant", "username", "field_plan", "field_tags", "field_password", "colResult"] as Key[]).map((k) => h("th", { key: k, scope: "col" }, t(k))),
          ),
        ),
        h("tbody", {}, rows.map((row, i) => h(RowLine, { key: row.line, row, outcome: outcomes === null ? undefined : outcomes[i] }))),
      ),
    ),
  );
}

/** The panel (in place of the klant's tabs while open). */
export function ImportPanel() {
  const open = state.importing.value;
  if (!open) return null;
  const run = open.run;
  const willImport = open.preview.rows.filter((r) => r.action !== "skip").length;
  const ended = run !== null && !("outcomes" in run);
  const holding = run !== null && "result" in run ? run.result.holding_passwords : open.preview.holds_passwords ? [open.preview.file] : [];
  return h(
    "section",
    { class: "card import-panel", "aria-labelledby": "import-title", "data-test": "import" },
    h("h2", { id: "import-title" }, t("importTitle")),
    h("p", { class: "path", "data-test": "import-file" }, t("importFrom", { file: open.preview.file })),
    run === null ? h(Columns, { open }) : null,
    run === null ? h(Defaults, { open }) : null,
    run !== null && "error" in run ? h("div", { class: "error", role: "alert" }, run.error.message) : null,
    h(Rows, { open }),
    ended && holding.length > 0 ? holding.map((file) => h("p", { key: file, class: "warning", "data-test": "import-holds-passwords" }, t("importHolds", { file }))) : null,
    h(
      "div",
      { class: "row" },
      run === null ? h("button", { class: "primary", "data-test": "import-run", disabled: willImport === 0, onClick: () => void runImport() }, t("importRun", { count: String(willImport) })) : null,
      run !== null && "outcomes" in run ? h("button", { class: "secondary", "data-test": "import-cancel", disabled: run.cancelling, onClick: () => void cancelImport() }, t("importCancel")) : null,
      run === null || ended ? h("button", { class: run === null ? "secondary" : "primary", "data-test": "import-close", onClick: () => void closeImport() }, t(ended ? "importFinish" : "cancel")) : null,
    ),
  );
}
