// The profile list, the profile form and the first-run welcome.
import * as actions from "../actions";
import type { ProfileView } from "../bindings";
import { h } from "../dom";
import { t } from "../i18n";
import { render, state } from "../state";

export function profileList(): HTMLElement {
  const items = state.profiles.map((p) =>
    h(
      "li",
      {},
      h(
        "button",
        {
          class: p.id === state.selected ? "profile selected" : "profile",
          "aria-current": p.id === state.selected ? "true" : null,
          "data-test": `profile-${p.id}`,
          onclick: () => void actions.selectProfile(p.id),
        },
        p.name,
        p.demo ? h("span", { class: "tag" }, "demo") : null,
      ),
    ),
  );
  return h(
    "nav",
    { class: "sidebar", "aria-label": t("profiles") },
    h("h2", {}, t("profiles")),
    h("ul", { class: "profiles" }, ...items),
    h("button", { class: "secondary", "data-test": "add-profile", onclick: () => { state.editing = "new"; render(); } }, t("addProfile")),
    !state.demo ? h("button", { class: "secondary", "data-test": "try-demo", onclick: () => void actions.startDemo() }, t("tryDemo")) : null,
  );
}

export function welcome(): HTMLElement {
  return h(
    "section",
    { class: "welcome card" },
    h("h2", {}, t("welcome")),
    h("p", {}, t("welcomeText")),
    h(
      "div",
      { class: "row" },
      h("button", { class: "primary", "data-test": "try-demo", onclick: () => void actions.startDemo() }, t("tryDemo")),
      h("button", { class: "secondary", "data-test": "add-profile", onclick: () => { state.editing = "new"; render(); } }, t("addProfile")),
    ),
  );
}

export function field(id: string, label: string, input: HTMLInputElement, hint?: string): HTMLElement {
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("small", { id: `${id}-hint` }, hint) : null);
}

export function profileForm(existing: ProfileView | null): HTMLElement {
  const input = (name: string, type: string, value: string, required = true) =>
    h("input", { name, type, value, required, autocomplete: "off", spellcheck: "false" });
  const name = input("name", "text", existing?.name ?? "", false);
  const baseUrl = input("base_url", "url", existing?.base_url ?? "");
  baseUrl.setAttribute("aria-describedby", "f-base-url-hint");
  const username = input("username", "text", existing?.username ?? "");
  const apiKey = input("api_key", "password", "", !existing);
  const password = input("password", "password", "", !existing);
  if (existing) {
    apiKey.placeholder = t("keepSecret");
    password.placeholder = t("keepSecret");
  }
  const openapi = input("openapi_url", "url", existing?.openapi_url ?? "", false);
  const form = h(
    "form",
    {
      class: "card profile-form",
      "aria-labelledby": "profile-form-title",
      onsubmit: (e: Event) => {
        e.preventDefault();
        void actions.saveProfile({
          id: existing?.id ?? null,
          name: name.value,
          base_url: baseUrl.value,
          username: username.value,
          api_key: apiKey.value || null,
          password: password.value || null,
          openapi_url: openapi.value || null,
        });
      },
    },
    h("h2", { id: "profile-form-title" }, existing ? t("editProfile") : t("addProfile")),
    field("f-name", t("name"), name),
    field("f-base-url", t("baseUrl"), baseUrl, t("baseUrlHint")),
    field("f-api-key", t("apiKey"), apiKey),
    field("f-username", t("username"), username),
    field("f-password", t("password"), password),
    field("f-openapi", t("openapiUrl"), openapi),
    h("p", { class: "note" }, t("secretsNote")),
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary", "data-test": "save-profile" }, t("save")),
      h("button", { type: "button", class: "secondary", onclick: () => { state.editing = null; render(); } }, t("cancel")),
    ),
  );
  return form;
}
