// Restore from a copy…: the first screen's way back the day this office's computer is gone —
// the copy target (added here as in Settings), the recovery kit's key (typed, pasted, or read
// by Rust from the kit's file), every backup found there, one restored into a folder Rust's
// dialog picks (progress, Cancel), and Carry on for this office.
import { h } from "preact";
import { useState } from "preact/hooks";
import { cancelRestoreFound, carryOn, chooseKlant, chooseTarget, closeRecovery, findCopies, restoreFound, restoring, targetOf } from "../actions/recover";
import type { CarriedOn, FoundBackup, FoundCopies, RecoverProgress } from "../bindings";
import { bytes, dateTime } from "../format";
import { locale, t, type Key } from "../i18n";
import { state, type Recovering } from "../state";
import { RestoreDone } from "./contents";
import { CopyTargets } from "./copies";
import { Field } from "./fields";

export function RecoverPanel() {
  const open = state.recovering.value;
  if (!open) return null;
  const targets = state.settings.value.copy_targets;
  return h(
    "section",
    { class: "card recover", "aria-labelledby": "recover-title", "data-test": "recover-panel" },
    h("h2", { id: "recover-title" }, t("recoverTitle")),
    h("p", { class: "note" }, t("recoverNote")),
    h("h3", {}, t("recoverWhere")),
    targets.length === 0
      ? h(CopyTargets, { recovering: true })
      : h(
          "div",
          {},
          h(
            Field,
            { id: "recover-target", label: t("recoverTarget") },
            h(
              "select",
              { id: "recover-target", "data-test": "recover-target", value: targetOf(open) ?? "", disabled: restoring(), onChange: (e: Event) => chooseTarget((e.target as HTMLSelectElement).value) },
              targets.map((target) => h("option", { key: target.id, value: target.id }, target.name)),
            ),
          ),
          h("details", { "data-test": "recover-add-target" }, h("summary", {}, t("recoverAddTarget")), h(CopyTargets, { recovering: true })),
        ),
    targets.length > 0 ? h(KeyForm, { open }) : null,
    open.error ? h("div", { class: "error", role: "alert", "data-test": "recover-error" }, open.error.message) : null,
    open.found ? h(Found, { open, found: open.found }) : null,
    h("div", { class: "row" }, h("button", { class: "secondary", "data-test": "recover-close", onClick: closeRecovery }, t("recoverClose"))),
  );
}

/** The kit's key: typed or pasted (its AGE-SECRET-KEY-1… line or its 24 words), or read by Rust
 * from the kit's file. The field is not bound to the state: what is typed stays in it. */
function KeyForm({ open }: { open: Recovering }) {
  return h(
    "form",
    { class: "recover-key", onSubmit: (e: Event) => (e.preventDefault(), void findCopies(false)) },
    h("h3", {}, t("recoverKeyTitle")),
    h(
      Field,
      { id: "recover-key", label: t("recoverKeyLabel") },
      h("textarea", { id: "recover-key", "data-test": "recover-key", rows: 3, autoComplete: "off", spellcheck: false, autoCapitalize: "off", class: "secret-text" }),
    ),
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary", "data-test": "recover-find", disabled: open.looking || restoring() }, t("recoverFind")),
      h("button", { type: "button", class: "secondary", "data-test": "recover-key-file", disabled: open.looking || restoring(), onClick: () => void findCopies(true) }, t("recoverKeyFile")),
    ),
    open.looking ? h("p", { role: "status", "data-test": "recover-looking" }, t("recoverLooking")) : null,
  );
}

function Found({ open, found }: { open: Recovering; found: FoundCopies }) {
  const klanten = [...new Set(found.backups.map((b) => b.klant).filter((k): k is string => k !== null))].sort((a, b) => a.localeCompare(b));
  const shown = found.backups.filter((b) => open.klant === null || b.klant === open.klant);
  // Only another kit's catalogs there: the key is not this office's (or mistyped) — nothing
  // else found is worth showing.
  if (found.other_kit && found.computers.length === 0) {
    return h("div", { class: "error", role: "alert", "data-test": "recover-other-kit" }, h("p", {}, t("recoverOtherKit", { fingerprint: found.fingerprint })), h("p", { class: "note" }, found.other_kit));
  }
  if (found.backups.length === 0) {
    return h("div", { class: "error", role: "alert", "data-test": "recover-nothing" }, t("recoverNothing", { target: found.target }));
  }
  return h(
    "div",
    { "data-test": "recover-found" },
    h("p", { role: "status", "data-test": "recover-summary" }, t("recoverFound", { backups: String(found.backups.length), klanten: String(klanten.length), target: found.target, from: found.made_from, fingerprint: found.fingerprint })),
    found.problems.length > 0
      ? h("details", { "data-test": "recover-problems" }, h("summary", {}, t("recoverProblems", { count: String(found.problems.length) })), h("ul", {}, found.problems.map((p, i) => h("li", { key: i }, p))))
      : null,
    klanten.length > 1
      ? h(
          Field,
          { id: "recover-klant", label: t("dashKlant") },
          h(
            "select",
            { id: "recover-klant", "data-test": "recover-klant", value: open.klant ?? "", onChange: (e: Event) => chooseKlant((e.target as HTMLSelectElement).value || null) },
            h("option", { value: "" }, t("recoverEveryKlant")),
            klanten.map((k) => h("option", { key: k, value: k }, k)),
          ),
        )
      : null,
    shown.length === 0
      ? null
      : h(
          "table",
          { class: "recover-backups", "data-test": "recover-backups" },
          h("thead", {}, h("tr", {}, [t("recoverColKlant"), t("recoverColSaved"), t("recoverColSize"), t("recoverColState"), ""].map((c, i) => h("th", { key: i, scope: "col" }, c)))),
          h("tbody", {}, shown.map((b) => h(BackupRow, { key: b.location, backup: b, open }))),
        ),
    h(CarryOn, { open, found }),
  );
}

/** Why the app cannot restore `b` itself, if it cannot. */
function notRestorable(b: FoundBackup): Key | null {
  if (!b.on_target) return "recoverGone";
  if (b.proof === "unverified") return "recoverUnverified";
  if (b.encrypted === "recipient" || b.encrypted === "unknown") return "recoverRecipient";
  return null;
}

const proofText: Record<FoundBackup["proof"], Key> = { catalog_and_record: "recoverProofBoth", catalog: "recoverProofCatalog", record: "recoverProofRecord", in_doubt: "recoverProofDoubt", unverified: "recoverProofNone" };

function BackupRow({ backup: b, open }: { backup: FoundBackup; open: Recovering }) {
  const restore = open.restore?.location === b.location ? open.restore : null;
  const busy = restoring();
  const why = notRestorable(b);
  const said = [t(proofText[b.proof]), b.encrypted === "passphrase" ? t("recoverEncrypted") : null, b.restore_test ? t(b.restore_test[1] ? "recoverTestPassed" : "recoverTestFailed", { date: dateTime(b.restore_test[0], locale()) }) : null, why ? t(why) : null].filter((s) => s !== null).join(" · ");
  return h(
    "tr",
    { "data-test": "recover-backup" },
    h("td", {}, h("strong", {}, b.klant ?? t("recoverUnknownKlant")), h("br", {}), h("span", { class: "note" }, b.name, b.computer ? ` — ${b.computer}` : "")),
    h("td", {}, b.saved_ms > 0 ? dateTime(b.saved_ms, locale()) : "?"),
    h("td", {}, bytes(b.bytes)),
    h("td", { class: "note" }, said),
    h(
      "td",
      {},
      h("button", { class: "secondary", "data-test": "recover-restore", disabled: busy || why !== null, onClick: () => void restoreFound(b.location) }, t("recoverRestore")),
      restore ? h(RestoreState, { restore }) : null,
    ),
  );
}

function RestoreState({ restore }: { restore: NonNullable<Recovering["restore"]> }) {
  if ("done" in restore) return h(RestoreDone, { done: restore.done });
  if ("error" in restore) {
    const cancelled = restore.error.code === "cancelled";
    return h("div", { class: cancelled ? "note" : "error", role: "alert", "data-test": "recover-restore-error" }, cancelled ? t("recoverCancelled") : restore.error.message);
  }
  return h(
    "div",
    { role: "status", "data-test": "recover-restoring" },
    h("p", {}, progressText(restore.progress), " ", h("progress", { value: restore.progress?.done ?? 0, max: restore.progress?.total || 1 })),
    h("button", { class: "secondary", "data-test": "recover-cancel", onClick: cancelRestoreFound }, t("cancel")),
  );
}

function progressText(progress: RecoverProgress | null): string {
  if (!progress) return t("recoverChooseFolder");
  const key: Key = progress.stage === "fetching" ? "recoverFetching" : "contentsRestoring";
  return `${t(key)} ${bytes(progress.done)} / ${bytes(progress.total)}`;
}

/** Carry on for this office: offered while a computer other than a carried-on one is there.
 * When this computer keeps another kit, carrying on replaces it: asked for with a tick. */
function CarryOn({ open, found }: { open: Recovering; found: FoundCopies }) {
  const [replaceKit, setReplaceKit] = useState(false);
  const lost = found.computers.filter((c) => c.carried_on_by === null);
  const carried = open.carried;
  const kept = state.settings.value.recovery;
  const otherKit = kept !== null && kept.fingerprint !== found.fingerprint;
  if (lost.length === 0 && carried === null) return null;
  return h(
    "section",
    { class: "carry-on", "aria-labelledby": "carry-on-title", "data-test": "carry-on" },
    h("h3", { id: "carry-on-title" }, t("carryOnTitle")),
    h("p", { class: "note" }, t("carryOnNote")),
    carried !== null && typeof carried === "object" && "lost" in carried
      ? h(CarriedOnView, { carried })
      : h(
          "div",
          {},
          otherKit
            ? h("label", { class: "check" }, h("input", { type: "checkbox", "data-test": "carry-on-replace-kit", checked: replaceKit, onChange: (e: Event) => setReplaceKit((e.target as HTMLInputElement).checked) }), " ", t("carryOnReplaceKit", { fingerprint: kept.fingerprint }))
            : null,
          h(
            "div",
            { class: "row" },
            lost.map((c) =>
              h("button", { key: c.id, class: "primary", "data-test": "carry-on-button", disabled: carried === "carrying" || restoring() || (otherKit && !replaceKit), onClick: () => void carryOn(c.id, replaceKit) }, t("carryOnFor", { computer: c.name, date: dateTime(c.catalog_ms, locale()) })),
            ),
          ),
        ),
    carried !== null && typeof carried === "object" && "error" in carried ? h("div", { class: "error", role: "alert", "data-test": "carry-on-error" }, carried.error.message) : null,
  );
}

function CarriedOnView({ carried }: { carried: CarriedOn }) {
  return h(
    "div",
    { class: "success", role: "status", "data-test": "carried-on" },
    h("p", {}, t("carriedOn", { klanten: String(carried.klanten.length), lost: carried.lost, copies: String(carried.added) })),
    h("ul", {}, carried.klanten.map((k) => h("li", { key: k.name }, h("strong", {}, k.name), ` — ${k.base_url}, ${k.username}: `, t("carriedCopies", { count: String(k.copies) })))),
    carried.notes.length > 0 ? h("ul", { class: "note", "data-test": "carried-notes" }, carried.notes.map((n, i) => h("li", { key: i }, n))) : null,
    carried.not_written.length > 0 ? h("p", {}, t("recoveryNotWritten", { targets: carried.not_written.join("; ") })) : null,
    h("h4", {}, t("carriedLeftTitle")),
    h("ol", { "data-test": "carried-left" }, (["carriedLeft1", "carriedLeft2", "carriedLeft3", "carriedLeft6", "carriedLeft4", "carriedLeft5"] as Key[]).map((k) => h("li", { key: k }, t(k)))),
  );
}
