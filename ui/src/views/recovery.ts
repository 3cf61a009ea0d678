// The office's recovery kit: Settings → Recovery kit (made here; its page, with the private key,
// is written by Rust where its native save dialog says and never comes to this page), and the
// dashboard's word when copies exist that cannot yet be restored without this computer.
import { h } from "preact";
import { useState } from "preact/hooks";
import { openSettings } from "../actions/session";
import { openRecovery } from "../actions/recover";
import { joinRecoveryKit, makeRecoveryKit } from "../actions/settings";
import { dateTime } from "../format";
import { locale, t } from "../i18n";
import { state } from "../state";

/** Settings → Recovery kit: whether one is made (its date and fingerprint), and making one. */
export function RecoveryKitSettings() {
  const kit = state.settings.value.recovery;
  const result = state.recoveryKit.value;
  const [withSecrets, setWithSecrets] = useState(false);
  const targets = state.settings.value.copy_targets;
  return h(
    "div",
    { "data-test": "recovery-kit" },
    h("h3", { id: "recovery-title" }, t("recoveryTitle")),
    h("p", { class: "note" }, t("recoveryNote")),
    targets.some((target) => target.place.kind !== "folder")
      ? h(
          "label",
          { class: "check" },
          h("input", { type: "checkbox", "data-test": "kit-with-secrets", checked: withSecrets, onChange: (e: Event) => setWithSecrets((e.target as HTMLInputElement).checked) }),
          " ",
          t("recoveryWithSecrets"),
        )
      : null,
    h(
      "p",
      { "data-test": "recovery-state" },
      kit ? t("recoveryMade", { date: dateTime(kit.made_ms, locale()), fingerprint: kit.fingerprint }) : t("recoveryNone"),
    ),
    h(
      "div",
      { class: "row" },
      h("button", { class: "secondary", "data-test": "make-recovery-kit", disabled: result === "making", onClick: () => void makeRecoveryKit(withSecrets) }, kit ? t("recoveryMakeNew") : t("recoveryMake")),
      h("button", { class: "secondary", "data-test": "join-recovery-kit", disabled: result === "making", onClick: () => void joinRecoveryKit() }, t("recoveryJoin")),
      h("button", { class: "secondary", "data-test": "settings-restore-from-copy", onClick: openRecovery }, t("restoreFromCopy")),
    ),
    result === null || result === "making"
      ? null
      : "error" in result
        ? h("div", { class: "error", role: "alert", "data-test": "recovery-error" }, result.error.message)
        : h(
            "div",
            { class: "success", role: "status", "data-test": "recovery-made" },
            h("p", {}, result.joined ? t("recoveryJoined", { fingerprint: result.fingerprint, path: result.path }) : t("recoverySaved", { path: result.path, fingerprint: result.fingerprint })),
            result.not_written.length > 0 ? h("p", {}, t("recoveryNotWritten", { targets: result.not_written.join("; ") })) : null,
          ),
  );
}

/** On the dashboard while copies are made but no kit is: they cannot yet be restored without
 * this computer. */
export function NoKitBanner() {
  const settings = state.settings.value;
  if (settings.recovery || settings.copy_targets.length === 0) return null;
  return h(
    "div",
    { class: "card paused", role: "status", "data-test": "no-recovery-kit" },
    h("p", {}, t("recoveryMissing")),
    h("button", { class: "secondary", "data-test": "kit-open-settings", onClick: openSettings }, t("openSettings")),
  );
}
