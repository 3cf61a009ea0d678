// Settings: where backups are saved, and how the service's callback reaches this computer.
import * as actions from "../actions";
import { h } from "../dom";
import { t } from "../i18n";
import { state } from "../state";
import { callbackSettings } from "./callback";

export function settingsView(): HTMLElement {
  const folder = state.settings.save_folder;
  return h(
    "section",
    { class: "card", "aria-labelledby": "settings-title" },
    h("h2", { id: "settings-title" }, t("tabSettings")),
    h("h3", {}, t("saveFolderTitle")),
    h("p", { "data-test": "save-folder" }, folder ? t("alwaysFolder", { folder }) : t("askEachTime")),
    h(
      "div",
      { class: "row" },
      h("button", { class: "secondary", onclick: () => void actions.chooseSaveFolder() }, t("chooseFolder")),
      folder ? h("button", { class: "secondary", onclick: () => void actions.askEachTime() }, t("useDialog")) : null,
    ),
    callbackSettings(),
  );
}
