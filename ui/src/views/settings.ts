// Settings: where backups are saved (and copied), and how the service's callback reaches this
// computer.
import { h } from "preact";
import { setPlansPaused } from "../actions/dashboard";
import { DEFAULT_MIN_FREE_MIB, askEachTime, chooseSaveFolder, editSpeed, isMinFree, saveFileNameTemplate, saveMinFree, saveSpeed, setAtOnce, setNotifyDesktop, setStartAtLogin, speedDraft, testNotification } from "../actions/settings";
import { t, type Key } from "../i18n";
import { DEFAULT_FILE_NAME, fileNamePreview } from "../format";
import { plansPaused, state } from "../state";
import { installUpdate, lookForUpdate, setInstallUpdates } from "../actions/updates";
import type { UpdateView } from "../bindings";
import { CallbackSettings } from "./callback";
import { CopyTargets } from "./copies";
import { RecoveryKitSettings } from "./recovery";
import { MailSettingsForm } from "./mail";
import { OfficeSettings } from "./office";
import { Check, Field } from "./fields";

/** Settings' parts, in the page's order: each heading's id and its text (the page's contents
 * at the top jump to them). */
const sections: [string, Key][] = [
  ["save-folder-title", "saveFolderTitle"],
  ["copies-title", "copiesTitle"],
  ["recovery-title", "recoveryTitle"],
  ["at-once-title", "atOnceTitle"],
  ["speed-title", "speedTitle"],
  ["room-title", "roomTitle"],
  ["background-title", "backgroundTitle"],
  ["notify-title", "notifyTitle"],
  ["mail-title", "mailTitle"],
  ["office-title", "officeTitle"],
  ["callback-title", "callbackTitle"],
  ["updates-title", "updatesTitle"],
];

/** Moves to a part of Settings: scrolled to, its heading focused (so the keyboard goes on
 * from there and a screen reader reads where it is). */
function jumpTo(id: string): void {
  const heading = document.getElementById(id);
  if (!heading) return;
  heading.setAttribute("tabindex", "-1");
  heading.scrollIntoView?.({ block: "start" }); // (none in the tests' jsdom)
  heading.focus();
}

/** The page's contents: a link per part. */
function Contents() {
  return h(
    "nav",
    { class: "settings-contents", "aria-label": t("settingsContents"), "data-test": "settings-contents" },
    h(
      "ul",
      {},
      sections.map(([id, key]) =>
        h(
          "li",
          { key: id },
          h(
            "a",
            {
              href: `#${id}`,
              "data-test": `jump-${id}`,
              onClick: (e: Event) => {
                e.preventDefault();
                jumpTo(id);
              },
            },
            t(key),
          ),
        ),
      ),
    ),
  );
}

export function SettingsPanel() {
  const folder = state.settings.value.save_folder;
  return h(
    "section",
    { class: "card", "aria-labelledby": "settings-title" },
    h("h2", { id: "settings-title" }, t("tabSettings")),
    h(Contents, {}),
    h("h3", { id: "save-folder-title" }, t("saveFolderTitle")),
    h("p", { "data-test": "save-folder" }, folder ? t("alwaysFolder", { folder }) : t("askEachTime")),
    h(
      "div",
      { class: "row" },
      h("button", { class: "secondary", onClick: () => void chooseSaveFolder() }, t("chooseFolder")),
      folder ? h("button", { class: "secondary", onClick: () => void askEachTime() }, t("useDialog")) : null,
    ),
    h(FileNames, {}),
    h(CopyTargets, { recovering: false }),
    h(RecoveryKitSettings, {}),
    h("h3", { id: "at-once-title" }, t("atOnceTitle")),
    h("p", { class: "note" }, t("atOnceNote")),
    h(
      Field,
      { id: "at-once", label: t("atOnceLabel") },
      h(
        "select",
        { id: "at-once", "data-test": "at-once", value: String(state.settings.value.unattended_at_once), onChange: (e: Event) => void setAtOnce(Number((e.target as HTMLSelectElement).value)) },
        [1, 2, 3, 4, 5, 6, 7, 8].map((n) => h("option", { key: n, value: String(n) }, String(n))),
      ),
    ),
    h(DownloadSpeed, {}),
    h(FreeSpace, {}),
    h(Background, {}),
    h(Notifications, {}),
    h(MailSettingsForm, {}),
    h(OfficeSettings, {}),
    h(CallbackSettings, {}),
    h(Updates, {}),
  );
}

/** What the update state says, in a line. */
function updateLine(view: UpdateView): string {
  const s = view.state;
  switch (s.kind) {
    case "off":
      return t("updatesOff", { why: s.why });
    case "not_configured":
      return t("updatesNotConfigured");
    case "not_looked":
      return t("updatesNotLooked");
    case "up_to_date":
      return t("updatesUpToDate", { version: view.current });
    case "failed":
      return t("updatesFailed", { message: s.message });
    default:
      return t("updatesAvailable", { version: s.version, current: view.current });
  }
}

/** Whether a newer Kluis is out, what is new, and installing it (Rust decides when it may). */
function Updates() {
  const view = state.update.value;
  const s = view?.state;
  const newer = s?.kind === "available" || s?.kind === "ready" ? s : null;
  const asks = view != null && s?.kind !== "off" && s?.kind !== "not_configured";
  const installs = asks && view.installs_here;
  return h(
    "section",
    { "aria-labelledby": "updates-title" },
    h("h3", { id: "updates-title" }, t("updatesTitle")),
    h("p", { role: "status", "data-test": "update-state" }, view ? updateLine(view) : ""),
    newer?.notes ? h("p", { class: "note update-notes", "data-test": "update-notes" }, newer.notes) : null,
    newer && !installs ? h("p", { class: "note" }, t(view?.managed_by_it ? "updatesByIt" : view?.unpacked ? "updatesUnpacked" : "updatesByPackageManager")) : null,
    asks
      ? h(
          "div",
          { class: "row" },
          h("button", { class: "secondary", "data-test": "update-look", disabled: state.busy.value, onClick: () => void lookForUpdate() }, t("updatesLook")),
          newer && installs ? h("button", { "data-test": "update-install", disabled: state.busy.value, onClick: () => void installUpdate() }, t("updatesInstall")) : null,
        )
      : null,
    installs ? h(Check, { test: "update-automatic", label: t("updatesAutomatic"), checked: view.automatic, onToggle: (on) => void setInstallUpdates(on) }) : null,
  );
}

/** How backups nobody watches are named: the template, with a preview. */
function FileNames() {
  const saved = state.settings.value.file_name_template ?? DEFAULT_FILE_NAME;
  const draft = state.fileNameDraft.value;
  const shown = draft ?? saved;
  return h(
    "form",
    { class: "file-names", onSubmit: (e: Event) => (e.preventDefault(), void saveFileNameTemplate()) },
    h(
      Field,
      { id: "file-name-template", label: t("fileNameLabel"), hint: t("fileNameHint") },
      h("input", { id: "file-name-template", "data-test": "file-name-template", "aria-describedby": "file-name-template-hint file-name-preview", value: shown, onInput: (e: Event) => (state.fileNameDraft.value = (e.target as HTMLInputElement).value) }),
    ),
    h("p", { id: "file-name-preview", class: "note", "data-test": "file-name-preview" }, t("fileNameExample", { name: fileNamePreview(shown || DEFAULT_FILE_NAME, "Bakker B.V.", new Date()) })),
    h("button", { class: "secondary", type: "submit", "data-test": "file-name-save", disabled: draft === null || draft === saved }, t("fileNameSave")),
  );
}

/** One speed limit for every download together, optionally in office hours only. */
function DownloadSpeed() {
  const d = speedDraft();
  const saved = state.settings.value.bandwidth;
  const value = (e: Event) => (e.target as HTMLInputElement).value;
  return h(
    "form",
    { class: "speed", "aria-labelledby": "speed-title", onSubmit: (e: Event) => (e.preventDefault(), void saveSpeed()) },
    h("h3", { id: "speed-title" }, t("speedTitle")),
    h("p", { class: "note" }, t("speedNote")),
    h(
      "p",
      { "data-test": "speed-state" },
      saved ? (saved.office_hours ? t("speedLimitedHours", { mb: String(saved.mb_per_sec), from: saved.office_hours.from, to: saved.office_hours.to }) : t("speedLimited", { mb: String(saved.mb_per_sec) })) : t("speedUnlimited"),
    ),
    h(Field, { id: "speed-mb", label: t("speedLabel") }, h("input", { id: "speed-mb", "data-test": "speed-mb", type: "text", inputMode: "decimal", autoComplete: "off", value: d.mbPerSec, onInput: (e: Event) => editSpeed({ mbPerSec: value(e) }) })),
    h(Check, { test: "speed-office-hours", label: t("speedOfficeHours"), checked: d.officeHours, onToggle: (officeHours) => editSpeed({ officeHours }) }),
    d.officeHours
      ? h(
          "div",
          { class: "row" },
          h(Field, { id: "speed-from", label: t("speedFrom") }, h("input", { id: "speed-from", type: "time", value: d.from, onInput: (e: Event) => editSpeed({ from: value(e) }) })),
          h(Field, { id: "speed-to", label: t("speedTo") }, h("input", { id: "speed-to", type: "time", value: d.to, onInput: (e: Event) => editSpeed({ to: value(e) }) })),
        )
      : null,
    h("button", { class: "secondary", type: "submit", "data-test": "speed-save", disabled: state.speedDraft.value === null }, t("speedSave")),
  );
}

/** The free space a backup's disk must have before the service is asked for it. */
function FreeSpace() {
  const saved = state.settings.value.min_free_mib;
  const draft = state.minFreeDraft.value;
  const shown = draft ?? (saved === null ? "" : String(saved));
  const defaults = { mib: String(DEFAULT_MIN_FREE_MIB) };
  return h(
    "form",
    { class: "room", "aria-labelledby": "room-title", onSubmit: (e: Event) => (e.preventDefault(), void saveMinFree()) },
    h("h3", { id: "room-title" }, t("roomTitle")),
    h("p", { class: "note" }, t("roomNote", defaults)),
    h("p", { "data-test": "room-state" }, saved === null ? t("roomStateDefault", defaults) : saved === 0 ? t("roomStateNone") : t("roomState", { mib: String(saved) })),
    h(Field, { id: "room-mib", label: t("roomLabel") }, h("input", { id: "room-mib", "data-test": "room-mib", type: "text", inputMode: "numeric", autoComplete: "off", value: shown, onInput: (e: Event) => (state.minFreeDraft.value = (e.target as HTMLInputElement).value) })),
    h("button", { class: "secondary", type: "submit", "data-test": "room-save", disabled: draft === null || !isMinFree(draft) }, t("roomSave")),
  );
}

/** Running without the window: start at login, and pausing every plan at once. */
function Background() {
  const paused = plansPaused.value;
  const login = state.startAtLogin.value;
  return h(
    "section",
    { "aria-labelledby": "background-title" },
    h("h3", { id: "background-title" }, t("backgroundTitle")),
    h("p", { class: "note" }, t("backgroundNote")),
    h(
      "div",
      { class: "row" },
      h(Check, { test: "start-at-login", label: t("startAtLogin"), checked: login === true, disabled: login === null, onToggle: (on) => void setStartAtLogin(on) }),
      h("button", { class: "secondary", "data-test": "pause-plans", onClick: () => void setPlansPaused(!paused) }, paused ? t("resumePlans") : t("pausePlans")),
    ),
    paused ? h("p", { role: "status", "data-test": "plans-paused-note" }, t("plansPausedNote")) : null,
  );
}

/** Desktop notifications of failed unattended backups and overdue klanten, with a test. */
function Notifications() {
  const test = state.notificationTest.value;
  return h(
    "section",
    { "aria-labelledby": "notify-title" },
    h("h3", { id: "notify-title" }, t("notifyTitle")),
    h("p", { class: "note" }, t("notifyNote")),
    h(
      "div",
      { class: "row" },
      h(Check, { test: "notify-desktop", label: t("notifyDesktop"), checked: state.settings.value.notify_desktop, onToggle: (on) => void setNotifyDesktop(on) }),
      h("button", { class: "secondary", "data-test": "notify-test", disabled: test === "testing", onClick: () => void testNotification() }, t("monitorTest")),
    ),
    h(
      "p",
      { role: "status", "data-test": "notify-test-result" },
      test === "ok" ? t("notifyTestOk") : test && typeof test === "object" ? `${t("notifyTestFailed")}: ${test.error.message}` : "",
    ),
  );
}
