// The profile list, the profile form (its draft lives in the state) and the first-run welcome.
import { h } from "preact";
import { memo } from "preact/compat";
import { useLayoutEffect, useState } from "preact/hooks";
import { backupAll, cancelAll } from "../actions/dashboard";
import { openImport } from "../actions/imports";
import { chooseProfileCa, clearProfileCa, closeProfileForm, editDraft, editProfile, forget, saveProfile } from "../actions/profiles";
import { selectProfile, showOverview, startDemo } from "../actions/session";
import { t } from "../i18n";
import { displayName, retryingProfiles, runningProfiles, state, type ProfileDraft } from "../state";
import { Field } from "./fields";
import { PlanSection } from "./plan";

/** A klant in the list. Memoised, like the dashboard's rows: it renders again only when its
 * name or state changes — not at every other klant's event, nor when the profiles are read
 * again (each is then a new object, a run moved its next due time on). */
const ProfileItem = memo(function ProfileItem({ id, name, demo, selected, running, retrying, queued }: { id: string; name: string; demo: boolean; selected: boolean; running: boolean; retrying: boolean; queued: boolean }) {
  return h(
    "li",
    {},
    h(
      "button",
      {
        class: selected ? "profile selected" : "profile",
        "aria-current": selected ? "true" : undefined,
        "data-test": `profile-${id}`,
        onClick: () => void selectProfile(id),
      },
      name,
      demo ? h("span", { class: "tag" }, t("demoTag")) : null,
      running ? h("span", { class: "tag running", "data-test": `running-${id}` }, t(retrying ? "retryingTag" : "backupRunning")) : null,
      queued ? h("span", { class: "tag", "data-test": `queued-${id}` }, t("queued")) : null,
    ),
  );
});

export function ProfileList() {
  const selected = state.selected.value;
  const running = runningProfiles.value;
  const retrying = retryingProfiles.value;
  const queued = state.queued.value;
  return h(
    "nav",
    { class: "sidebar", "aria-label": t("profiles") },
    h("h2", {}, t("profiles")),
    state.profiles.value.length > 1
      ? h(
          "button",
          { class: state.overview.value ? "profile selected" : "profile", "aria-current": state.overview.value ? "page" : undefined, "data-test": "overview", onClick: () => void showOverview() },
          t("dashTitle"),
        )
      : null,
    h(
      "ul",
      { class: "profiles" },
      state.profiles.value.map((p) =>
        h(ProfileItem, {
          key: p.id,
          id: p.id,
          name: displayName(p),
          demo: p.demo,
          selected: p.id === selected && !state.overview.value,
          running: running.has(p.id),
          retrying: retrying.has(p.id),
          queued: queued.has(p.id),
        }),
      ),
    ),
    h("button", { class: "secondary", "data-test": "add-profile", onClick: () => editProfile(null) }, t("addProfile")),
    h("button", { class: "secondary", "data-test": "import-klanten", onClick: () => void openImport() }, t("importKlanten")),
    h("button", { class: "secondary", "data-test": "backup-all", disabled: state.queued.value.size > 0, onClick: () => void backupAll() }, t("backupAll")),
    state.queued.value.size > 0 || running.size > 0
      ? h("button", { class: "secondary", "data-test": "cancel-all", onClick: () => void cancelAll() }, t("cancelAll"))
      : null,
    !state.demo.value ? h("button", { class: "secondary", "data-test": "try-demo", onClick: () => void startDemo() }, t("tryDemo")) : null,
  );
}

export function Welcome() {
  return h(
    "section",
    { class: "welcome card" },
    h("h2", {}, t("welcome")),
    h("p", {}, t("welcomeText")),
    h(
      "div",
      { class: "row" },
      h("button", { class: "primary", "data-test": "try-demo", onClick: () => void startDemo() }, t("tryDemo")),
      h("button", { class: "secondary", "data-test": "add-profile", onClick: () => editProfile(null) }, t("addProfile")),
      h("button", { class: "secondary", "data-test": "import-klanten", onClick: () => void openImport() }, t("importKlanten")),
    ),
  );
}

type DraftField = keyof Omit<ProfileDraft, "id">;

const isDemo = (id: string) => state.profiles.value.some((p) => p.id === id && p.demo);

/** The browser's validation tip in the UI's language (the webview's own would be English). */
function explainInvalid(el: HTMLInputElement): void {
  const v = el.validity;
  el.setCustomValidity(v.valueMissing ? t("invalidRequired") : v.typeMismatch ? t("invalidUrl") : "");
}

/** An input bound to the draft's `field`: what is typed goes to the state at once. A secret
 * field (`type` password) has a Show/Hide toggle, so a long key can be checked. */
function DraftInput({ id, field, type, required, placeholder, describedBy }: { id: string; field: DraftField; type: string; required: boolean; placeholder?: string; describedBy?: string }) {
  const draft = state.editing.value;
  const [shown, setShown] = useState(false);
  const secret = type === "password";
  const input = h("input", {
    id,
    name: field,
    type: secret && shown ? "text" : type,
    required,
    placeholder,
    autocomplete: "off",
    spellcheck: false,
    "aria-describedby": describedBy,
    value: draft?.[field] ?? "",
    onInput: (e: Event) => {
      const el = e.target as HTMLInputElement;
      el.setCustomValidity(""); // checked afresh at the next submit
      editDraft(field, el.value);
    },
    onInvalid: (e: Event) => explainInvalid(e.target as HTMLInputElement),
  });
  if (!secret) return input;
  return h(
    "div",
    { class: "with-toggle" },
    input,
    h("button", { type: "button", class: "secondary", "aria-pressed": shown ? "true" : "false", "aria-controls": id, "data-test": `${id}-show`, onClick: () => setShown(!shown) }, shown ? t("hide") : t("show")),
  );
}

/** The extra CA the profile trusts, shown so it can be compared before it is relied on. */
function TrustedCertificate({ id }: { id: string }) {
  const cas = state.profiles.value.find((p) => p.id === id)?.trusted_cas ?? [];
  return h(
    "section",
    { class: "trust", "aria-labelledby": "trust-title" },
    h("h3", { id: "trust-title" }, t("trustTitle")),
    h("p", { class: "note" }, t("trustNote")),
    cas.length === 0
      ? h("p", { "data-test": "trusted-none" }, t("trustNone"))
      : h("ul", { "data-test": "trusted-cas" }, cas.map((ca) => h("li", { key: ca.sha256 }, h("strong", {}, ca.subject), h("br", {}), h("code", { class: "fingerprint" }, ca.sha256)))),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "secondary", "data-test": "choose-ca", onClick: () => void chooseProfileCa(id) }, t("trustChoose")),
      cas.length > 0 ? h("button", { type: "button", class: "secondary", "data-test": "clear-ca", onClick: () => void clearProfileCa(id) }, t("trustRemove")) : null,
    ),
  );
}

/** Forgetting a profile: apart from the form's everyday buttons, and confirmed first. */
function ForgetProfile({ id }: { id: string }) {
  return h(
    "section",
    { class: "danger-zone", "aria-labelledby": "forget-title" },
    h("h3", { id: "forget-title" }, t("forgetTitle")),
    h("p", { class: "note" }, t("forgetNote")),
    h("button", { type: "button", class: "danger", "data-test": "forget-profile", onClick: () => void forget(id) }, t("forget")),
  );
}

export function ProfileForm() {
  const draft = state.editing.value;
  // The form's first field takes the focus when it opens.
  useLayoutEffect(() => document.getElementById("f-name")?.focus(), []);
  if (!draft) return null;
  const existing = draft.id !== null;
  const saved = state.profiles.value.find((p) => p.id === draft.id);
  const keep = existing ? t("keepSecret") : undefined;
  const input = (id: string, label: string, field: DraftField, type: string, required: boolean, extra: { placeholder?: string; hint?: string } = {}) =>
    h(Field, { id, label, hint: extra.hint }, h(DraftInput, { id, field, type, required, placeholder: extra.placeholder, describedBy: extra.hint ? `${id}-hint` : undefined }));
  return h(
    "form",
    {
      class: "card profile-form",
      "aria-labelledby": "profile-form-title",
      onSubmit: (e: Event) => {
        e.preventDefault();
        void saveProfile();
      },
    },
    h("h2", { id: "profile-form-title" }, existing ? t("editProfile") : t("addProfile")),
    input("f-name", t("name"), "name", "text", true),
    input("f-base-url", t("baseUrl"), "base_url", "url", true, { hint: t("baseUrlHint") }),
    input("f-api-key", t("apiKey"), "api_key", "password", !existing, { placeholder: keep }),
    input("f-username", t("username"), "username", "text", true),
    input("f-password", t("password"), "password", "password", !existing, { placeholder: keep }),
    input("f-openapi", t("openapiUrl"), "openapi_url", "url", false),
    h("p", { class: "note" }, t("secretsNote")),
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary", "data-test": "save-profile" }, t("save")),
      h("button", { type: "button", class: "secondary", onClick: () => closeProfileForm() }, t("cancel")),
    ),
    saved ? h(PlanSection, { profile: saved }) : null,
    draft.id !== null && !isDemo(draft.id) ? h(TrustedCertificate, { id: draft.id }) : null,
    draft.id !== null ? h(ForgetProfile, { id: draft.id }) : null,
  );
}
