// A profile's plan (in its form): when Kluis backs the klant up on its own, and when next.
// The draft lives in the state; the schedule is checked by Rust when it is saved.
import { h } from "preact";
import { chooseKlantFolder, clearKlantFolder, confirmRetention, copiesTo, editKeep, editPlan, planDraft, saveEncryption, saveMonitor, savePlan, saveRetention, setCopyTo, setRestoreTestMonthly, setVerifyMonthly, testMonitor } from "../actions/plan";
import { closeProfileForm } from "../actions/profiles";
import type { Day, HistoryEntry, ProfileView, Retention, Schedule } from "../bindings";
import { bytes, dateTime } from "../format";
import { locale, t, type Key } from "../i18n";
import { state, type KeepPart } from "../state";
import { Check, Field } from "./fields";

export const kinds: [Schedule["kind"], Key][] = [
  ["manual", "planManual"],
  ["daily", "planDaily"],
  ["weekdays", "planWeekdays"],
  ["weekly", "planWeekly"],
  ["every", "planEvery"],
];
export const days: Day[] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/** When the profile is backed up next, or why not (for the form and the Backup panel). */
export function NextBackup({ profile }: { profile: ProfileView }) {
  const text =
    profile.next_backup_ms !== null
      ? t("planNext", { when: dateTime(profile.next_backup_ms, locale()) })
      : profile.plan?.paused
        ? t("planIsPaused")
        : t("planNone");
  return h("p", { class: "note", "data-test": "next-backup" }, text);
}

export function PlanSection({ profile }: { profile: ProfileView }) {
  const d = planDraft(profile);
  const edit = (change: Parameters<typeof editPlan>[1]) => editPlan(profile, change);
  const value = (e: Event) => (e.target as HTMLInputElement).value;
  const noFolder = d.kind !== "manual" && !d.paused && !state.settings.value.save_folder && !profile.save_folder;
  return h(
    "section",
    { class: "plan", "aria-labelledby": "plan-title", "data-test": "plan" },
    h("h3", { id: "plan-title" }, t("planTitle")),
    h("p", { class: "note" }, t("planNote")),
    h(
      Field,
      { id: "plan-kind", label: t("planKind") },
      h("select", { id: "plan-kind", value: d.kind, onChange: (e: Event) => edit({ kind: value(e) as Schedule["kind"] }) }, kinds.map(([kind, key]) => h("option", { key: kind, value: kind }, t(key)))),
    ),
    d.kind === "weekly"
      ? h(Field, { id: "plan-day", label: t("planDay") }, h("select", { id: "plan-day", value: d.day, onChange: (e: Event) => edit({ day: value(e) as Day }) }, days.map((day) => h("option", { key: day, value: day }, t(day)))))
      : null,
    d.kind === "daily" || d.kind === "weekdays" || d.kind === "weekly"
      ? h(Field, { id: "plan-at", label: t("planAt") }, h("input", { id: "plan-at", type: "time", required: true, value: d.at, onInput: (e: Event) => edit({ at: value(e) }) }))
      : null,
    d.kind === "every"
      ? h(Field, { id: "plan-hours", label: t("planHours") }, h("input", { id: "plan-hours", type: "number", min: 1, max: 168, required: true, value: d.hours, onInput: (e: Event) => edit({ hours: value(e) }) }))
      : null,
    d.kind !== "manual"
      ? h(Check, { test: "plan-paused", label: t("planPaused"), checked: d.paused, onToggle: (paused) => edit({ paused }) })
      : null,
    noFolder
      ? h(
          "div",
          { class: "warning", role: "note", "data-test": "plan-needs-folder" },
          h("p", {}, t("planNeedsFolder")),
          h("button", { type: "button", class: "secondary", onClick: () => { closeProfileForm(); state.tab.value = "settings"; } }, t("openSettings")),
        )
      : null,
    h("div", { class: "row" }, h("button", { type: "button", class: "secondary", "data-test": "plan-save", disabled: noFolder, onClick: () => void savePlan(profile) }, t("planSave"))),
    h(NextBackup, { profile }),
    h(KlantFolder, { profile }),
    h(MonitorSection, { profile }),
    h(RetentionSection, { profile }),
    h(EncryptionSection, { profile }),
  );
}

/** Where the klant's backups go: its own folder (picked in Rust's dialog), or one of its
 * own under the office's save folder. */
function KlantFolder({ profile }: { profile: ProfileView }) {
  const office = state.settings.value.save_folder;
  const own = profile.save_folder;
  return h(
    "div",
    { class: "klant-folder", role: "group", "aria-labelledby": "klant-folder-title", "data-test": "klant-folder" },
    h("h4", { id: "klant-folder-title" }, t("klantFolderTitle")),
    h("p", { "data-test": "klant-folder-state" }, own ? t("klantFolderOwn", { folder: own }) : office ? t("klantFolderOffice", { folder: office }) : t("klantFolderNone")),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "secondary", "data-test": "klant-folder-choose", onClick: () => void chooseKlantFolder(profile) }, t("klantFolderChoose")),
      own ? h("button", { type: "button", class: "secondary", "data-test": "klant-folder-clear", onClick: () => void clearKlantFolder(profile) }, t("klantFolderClear")) : null,
    ),
  );
}

/** Encryption at rest: none, a passphrase (kept in the keyring) or an age recipient. */
function EncryptionSection({ profile }: { profile: ProfileView }) {
  const d = planDraft(profile);
  const saved = profile.encryption;
  const value = (e: Event) => (e.target as HTMLInputElement).value;
  const kinds: [typeof d.encryption, Key][] = [
    ["none", "encryptNone"],
    ["passphrase", "encryptPassphrase"],
    ["recipient", "encryptRecipient"],
  ];
  return h(
    "div",
    { class: "encryption", role: "group", "aria-labelledby": "encrypt-title", "data-test": "encryption" },
    h("h4", { id: "encrypt-title" }, t("encryptTitle")),
    h("p", { class: "note" }, t("encryptNote")),
    h(
      "p",
      { "data-test": "encryption-state" },
      saved === null ? t("encryptStateNone") : saved.kind === "passphrase" ? t("encryptStatePassphrase") : t("encryptStateRecipient", { recipient: saved.recipient }),
    ),
    h(
      Field,
      { id: "encrypt-kind", label: t("encryptKind") },
      h("select", { id: "encrypt-kind", "data-test": "encrypt-kind", value: d.encryption, onChange: (e: Event) => editPlan(profile, { encryption: value(e) as typeof d.encryption }) }, kinds.map(([kind, key]) => h("option", { key: kind, value: kind }, t(key)))),
    ),
    d.encryption === "passphrase"
      ? h(
          Field,
          { id: "encrypt-passphrase", label: t("encryptPassphraseLabel"), hint: saved?.kind === "passphrase" ? t("encryptPassphraseKeep") : t("encryptPassphraseHint") },
          h("input", { id: "encrypt-passphrase", "data-test": "encrypt-passphrase", type: "password", autoComplete: "new-password", value: d.passphrase, onInput: (e: Event) => editPlan(profile, { passphrase: value(e) }) }),
        )
      : null,
    d.encryption === "recipient"
      ? h(
          Field,
          { id: "encrypt-recipient", label: t("encryptRecipientLabel") },
          h("input", { id: "encrypt-recipient", "data-test": "encrypt-recipient", autoComplete: "off", spellcheck: false, placeholder: "age1…", value: d.recipient, onInput: (e: Event) => editPlan(profile, { recipient: value(e) }) }),
        )
      : null,
    h("div", { class: "row" }, h("button", { type: "button", class: "secondary", "data-test": "encrypt-save", onClick: () => void saveEncryption(profile) }, t("encryptSave"))),
  );
}

const keepParts: KeepPart[] = ["keep_last", "keep_daily", "keep_weekly", "keep_monthly"];
const ruleWords: Record<KeepPart, Key> = { keep_last: "keepRuleLast", keep_daily: "keepRuleDaily", keep_weekly: "keepRuleWeekly", keep_monthly: "keepRuleMonthly" };

/** A schedule in words, in the UI's language: "Every day at 02:00". */
export function describeSchedule(s: Schedule): string {
  switch (s.kind) {
    case "manual":
      return t("planManual");
    case "daily":
    case "weekdays":
      return `${t(s.kind === "daily" ? "planDaily" : "planWeekdays")}, ${s.at}`;
    case "weekly":
      return `${t("planWeekly")}: ${t(s.day)} ${s.at}`;
    case "every":
      return `${t("planEvery")}: ${s.hours} h`;
  }
}

/** A rule in words, in the UI's language: "the newest 3, 7 daily". */
export function describeRule(rule: Retention | null): string {
  const parts = keepParts.filter((part) => (rule?.[part] ?? 0) > 0).map((part) => t(ruleWords[part], { n: String(rule?.[part]) }));
  return parts.length === 0 ? t("keepAll") : t("keepNow", { rule: parts.join(", ") });
}

/** A backup as the preview lists it: when it was saved, its size, where it is. */
function PreviewItem({ e }: { e: HistoryEntry }) {
  return h("li", { "data-test": "keep-would-remove-item" }, dateTime(e.finished_at_ms ?? e.started_at_ms, locale()), " · ", bytes(e.bytes), " · ", h("span", { class: "path" }, e.path ?? ""));
}

/** The klant's retention rule: four counts, saved only after the backups it would remove
 * now have been shown (and confirmed). */
function RetentionSection({ profile }: { profile: ProfileView }) {
  const d = planDraft(profile);
  const wouldRemove = d.wouldRemove;
  return h(
    "div",
    { class: "keep", role: "group", "aria-labelledby": "keep-title", "data-test": "keep" },
    h("h4", { id: "keep-title" }, t("keepTitle")),
    h("p", { class: "note" }, t("keepNote")),
    h("p", { "data-test": "keep-state" }, describeRule(profile.retention)),
    keepParts.map((part) =>
      h(
        Field,
        { key: part, id: `keep-${part}`, label: t(part) },
        h("input", { id: `keep-${part}`, type: "number", min: 0, max: 1000, step: 1, inputMode: "numeric", value: d.keep[part], onInput: (e: Event) => editKeep(profile, part, (e.target as HTMLInputElement).value) }),
      ),
    ),
    wouldRemove === null
      ? h("div", { class: "row" }, h("button", { type: "button", class: "secondary", "data-test": "keep-save", onClick: () => void saveRetention(profile) }, t("keepSave")))
      : h(
          "div",
          { class: "warning", role: "alert", "data-test": "keep-would-remove" },
          h("p", {}, t("keepWouldRemove", { count: String(wouldRemove.length) })),
          h("ul", {}, wouldRemove.map((e) => h(PreviewItem, { key: e.id, e }))),
          h(
            "div",
            { class: "row" },
            h("button", { type: "button", class: "danger", "data-test": "keep-confirm", onClick: () => void confirmRetention(profile, true) }, t("keepConfirm")),
            h("button", { type: "button", class: "secondary", "data-test": "keep-cancel", onClick: () => void confirmRetention(profile, false) }, t("cancel")),
          ),
        ),
    h(Check, { test: "verify-monthly", label: t("verifyMonthly"), checked: profile.verify_monthly, onToggle: (on) => void setVerifyMonthly(profile, on) }),
    h(Check, { test: "restore-test-monthly", label: t("restoreTestMonthly"), checked: profile.restore_test_monthly, onToggle: (on) => void setRestoreTestMonthly(profile, on) }),
    h(CopyTo, { profile }),
  );
}

/** Which copy targets the klant's backups go to: each one ticked unless the klant left it. */
function CopyTo({ profile }: { profile: ProfileView }) {
  const targets = state.settings.value.copy_targets;
  if (targets.length === 0) return null;
  return h(
    "fieldset",
    { class: "copy-to", "data-test": "copy-to" },
    h("legend", {}, t("copyToTitle")),
    targets.map((target) =>
      h(Check, { key: target.id, test: `copy-to-${target.name}`, label: target.name, checked: copiesTo(profile, target.id), onToggle: (on) => void setCopyTo(profile, target.id, on) }),
    ),
  );
}

/** The klant's outside monitor: a ping URL told of each unattended backup, and Send test. */
function MonitorSection({ profile }: { profile: ProfileView }) {
  const d = planDraft(profile);
  const test = state.monitorTest.value?.profileId === profile.id ? state.monitorTest.value.result : null;
  return h(
    "div",
    { class: "monitor", role: "group", "aria-labelledby": "monitor-title", "data-test": "monitor" },
    h("h4", { id: "monitor-title" }, t("monitorTitle")),
    h("p", { class: "note" }, t("monitorNote")),
    h("p", { "data-test": "monitor-state" }, profile.monitor ? t("monitorSet") : t("monitorNone")),
    h(
      Field,
      { id: "monitor-url", label: profile.monitor ? t("monitorReplace") : t("monitorUrl") },
      h("input", { id: "monitor-url", type: "url", inputMode: "url", autoComplete: "off", spellcheck: false, placeholder: "https://hc-ping.com/…", value: d.pingUrl, onInput: (e: Event) => editPlan(profile, { pingUrl: (e.target as HTMLInputElement).value }) }),
    ),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "secondary", "data-test": "monitor-save", disabled: d.pingUrl.trim() === "", onClick: () => void saveMonitor(profile) }, t("monitorSave")),
      profile.monitor ? h("button", { type: "button", class: "secondary", "data-test": "monitor-test", disabled: test === "testing", onClick: () => void testMonitor(profile) }, t("monitorTest")) : null,
      profile.monitor ? h("button", { type: "button", class: "secondary", "data-test": "monitor-remove", onClick: () => void saveMonitor(profile, true) }, t("monitorRemove")) : null,
    ),
    test === null
      ? null
      : test === "testing"
        ? h("p", { role: "status" }, t("loading"))
        : test === "ok"
          ? h("p", { class: "success", role: "status", "data-test": "monitor-test-ok" }, t("monitorTestOk"))
          : h("div", { class: "error", role: "alert", "data-test": "monitor-test-failed" }, h("strong", {}, t("monitorTestFailed")), h("p", {}, test.error.message)),
  );
}
