// The /util/environment answer as a readable, collapsible, copyable tree.
import { useState } from "preact/hooks";
import { h } from "preact";
import { refreshEnvironment, signIn } from "../actions/session";
import { copyText } from "../dom";
import { t } from "../i18n";
import { displayName, selectedEnvironment, selectedProfile, state } from "../state";
import { ErrorBody, errorTitle } from "../errors";

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return h(
    "button",
    {
      class: "icon",
      type: "button",
      "aria-label": copied ? t("copied") : `${t("copy")}: ${label}`,
      title: t("copy"),
      onClick: () => void copyText(text).then(() => setCopied(true)),
    },
    copied ? "✓" : t("copy"),
  );
}

function scalar(value: unknown): string {
  return value === null ? "null" : String(value);
}

/** One node of the tree: objects and arrays collapse, values can be copied. */
export function Tree({ name, value, depth = 0 }: { name: string; value: unknown; depth?: number }) {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    return h(
      "details",
      { open: depth < 2 },
      h("summary", {}, h("span", { class: "key" }, name), h("span", { class: "count" }, Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`)),
      h("ul", { class: "tree" }, entries.map(([k, v]) => h("li", { key: k }, h(Tree, { name: k, value: v, depth: depth + 1 })))),
    );
  }
  return h("div", { class: "leaf" }, h("span", { class: "key" }, name), h("span", { class: "value" }, scalar(value)), h(CopyButton, { text: scalar(value), label: name }));
}

/** The selected klant's environment — never another's: not signed in, it says so. */
function Body() {
  const profile = selectedProfile.value;
  if (!profile) return null;
  const loaded = selectedEnvironment.value;
  if (!loaded) {
    if (state.signedIn.value.has(profile.id)) return h("p", {}, t("loading"));
    return h(
      "div",
      { "data-test": "environment-signed-out" },
      h("p", {}, t("environmentSignedOut", { klant: displayName(profile) })),
      h("button", { class: "primary", type: "button", onClick: () => void signIn() }, t("signIn")),
    );
  }
  if ("error" in loaded) return h("div", { class: "error", "data-test": "environment-error" }, h("strong", {}, errorTitle(loaded.error)), h(ErrorBody, { error: loaded.error }));
  const env = loaded.ok;
  return h(
    "div",
    { "data-test": "environment" },
    h("ul", { class: "tree root" }, Object.entries(env as object).map(([k, v]) => h("li", { key: k }, h(Tree, { name: k, value: v })))),
    h("button", { class: "secondary", type: "button", onClick: () => void copyText(JSON.stringify(env, null, 2)) }, t("copyAll")),
  );
}

export function EnvironmentPanel() {
  return h(
    "section",
    { class: "card", "aria-labelledby": "env-title" },
    h("h2", { id: "env-title" }, t("tabEnvironment"), selectedProfile.value ? ` — ${displayName(selectedProfile.value)}` : ""),
    h("p", { class: "note" }, t("environmentIntro")),
    h(Body, {}),
    h("button", { class: "secondary", type: "button", onClick: () => void refreshEnvironment() }, t("refresh")),
  );
}
