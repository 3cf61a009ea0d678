// The /util/environment answer as a readable, collapsible, copyable tree.
import * as actions from "../actions";
import { copyText, h } from "../dom";
import { t } from "../i18n";
import { state } from "../state";

function copyButton(text: string, label: string): HTMLElement {
  const button = h("button", { class: "icon", type: "button", "aria-label": `${t("copy")}: ${label}`, title: t("copy") }, t("copy"));
  button.addEventListener("click", () => {
    void copyText(text).then(() => {
      button.textContent = "✓";
      button.setAttribute("aria-label", t("copied"));
    });
  });
  return button;
}

function scalar(value: unknown): string {
  return value === null ? "null" : String(value);
}

/** One node of the tree: objects and arrays collapse, values can be copied. */
export function tree(key: string, value: unknown, depth = 0): HTMLElement {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    const details = h(
      "details",
      { open: depth < 2 },
      h("summary", {}, h("span", { class: "key" }, key), h("span", { class: "count" }, Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`)),
      h("ul", { class: "tree" }, ...entries.map(([k, v]) => h("li", {}, tree(k, v, depth + 1)))),
    );
    return details;
  }
  return h("div", { class: "leaf" }, h("span", { class: "key" }, key), h("span", { class: "value" }, scalar(value)), copyButton(scalar(value), key));
}

export function environmentView(): HTMLElement {
  const env = state.environment as { error?: { message: string } } | null;
  let body: HTMLElement;
  if (env === null) body = h("p", {}, t("loading"));
  else if (env && typeof env === "object" && "error" in env && env.error) body = h("p", { class: "error", role: "alert" }, env.error.message);
  else
    body = h(
      "div",
      { "data-test": "environment" },
      h("ul", { class: "tree root" }, ...Object.entries(env as object).map(([k, v]) => h("li", {}, tree(k, v)))),
      h("button", { class: "secondary", type: "button", onclick: () => void copyText(JSON.stringify(env, null, 2)) }, t("copyAll")),
    );
  return h(
    "section",
    { class: "card", "aria-labelledby": "env-title" },
    h("h2", { id: "env-title" }, t("tabEnvironment")),
    h("p", { class: "note" }, t("environmentIntro")),
    body,
    h("button", { class: "secondary", type: "button", onclick: () => void actions.refreshEnvironment() }, t("refresh")),
  );
}
