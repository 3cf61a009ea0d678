// The profile list, the profile form (its draft lives in the state) and the first-run welcome.
import { h } from "preact";
import { openRecovery } from "../actions/recover";
import { memo } from "preact/compat";
import { useLayoutEffect, useState } from "preact/hooks";
import { openImport } from "../actions/imports";
import { chooseProfileCa, clearProfileCa, closeProfileForm, editDraft, editProfile, forget, saveProfile } from "../actions/profiles";
import { openDemo, selectProfile, showOverview } from "../actions/session";
import { found, tagsOfAll } from "../find";
import { t } from "../i18n";
import { displayName, retryingProfiles, runningProfiles, state, type ProfileDraft } from "../state";
import { Field } from "./fields";
import { PlanSection } from "./plan";

/** A klant in the list. Memoised, like the dashboard's rows: it renders again only when its
 * name or state changes — not at every other klant's event, nor when the profiles are read
 * again (each is then a new object, a run moved its next due time on). */
const ProfileItem = memo(function ProfileItem({ id, name, tags, demo, selected, running, retrying, queued }: { id: string; name: string; tags: string; demo: boolean; selected: boolean; running: boolean; retrying: boolean; queued: boolean }) {
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
        onKeyDown: moveThroughList,
      },
      name,
      demo ? h("span", { class: "tag" }, t("demoTag")) : null,
      running ? h("span", { class: "tag running", "data-test": `running-${id}` }, t(retrying ? "retryingTag" : "backupRunning")) : null,
      queued ? h("span", { class: "tag", "data-test": `queued-${id}` }, t("queued")) : null,
      tags ? h("small", { class: "tags" }, tags) : null,
    ),
  );
});

/** The most klanten the list shows at once: the search finds the others (and the dashboard
 * shows all). A list of 1,000 buttons would only be scrolled past. */
export const LIST_MOST = 50;

/** The klanten's buttons in the list, in order. */
function listButtons(): HTMLButtonElement[] {
  return [...document.querySelectorAll<HTMLButtonElement>("#profile-list button.profile")];
}

/** Arrows move through the list's klanten (Home, End to its ends); up from the first goes
 * back to the search. */
function moveThroughList(e: KeyboardEvent): void {
  const buttons = listButtons();
  const at = buttons.indexOf(e.currentTarget as HTMLButtonElement);
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  if (to < 0) document.getElementById("find")?.focus();
  else buttons[Math.min(to, buttons.length - 1)]?.focus();
}

/** The search box over the list and the dashboard (Ctrl+K or / from anywhere), and the tag
 * filter. Down moves into the klanten found, Enter opens the first, Escape clears. */
function Finder() {
  const tags = tagsOfAll.value;
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      listButtons()[0]?.focus();
    } else if (e.key === "Enter" && found.value[0]) {
      e.preventDefault();
      void selectProfile(found.value[0].id);
    } else if (e.key === "Escape" && state.find.value) {
      e.preventDefault();
      state.find.value = "";
    }
  };
  return h(
    "div",
    { class: "finder", role: "search" },
    h("label", { for: "find", class: "visually-hidden" }, t("findLabel")),
    h("input", {
      id: "find",
      type: "search",
      "data-test": "find",
      placeholder: t("findPlaceholder"),
      autocomplete: "off",
      spellcheck: false,
      "aria-controls": "profile-list",
      "aria-describedby": "found-count",
      value: state.find.value,
      onInput: (e: Event) => (state.find.value = (e.target as HTMLInputElement).value),
      onKeyDown,
    }),
    tags.length > 0
      ? h(
          "select",
          {
            "aria-label": t("tagFilterLabel"),
            "data-test": "tag-filter",
            value: state.tagFilter.value ?? "",
            onChange: (e: Event) => {
              const v = (e.target as HTMLSelectElement).value;
              state.tagFilter.value = v === "" ? null : v;
            },
          },
          h("option", { value: "" }, t("tagFilterAll")),
          tags.map((tag) => h("option", { key: tag, value: tag }, tag)),
        )
      : null,
  );
}

export function ProfileList() {
  const selected = state.selected.value;
  const running = runningProfiles.value;
  const retrying = retryingProfiles.value;
  const queued = state.queued.value;
  const all = state.profiles.value;
  const list = found.value;
  const shown = list.slice(0, LIST_MOST);
  return h(
    "nav",
    { class: "sidebar", "aria-label": t("profiles") },
    h("h2", {}, t("profiles")),
    all.length > 1 ? h(Finder, {}) : null,
    // The dashboard: with more than one klant, or in an office (its Office is there, whatever
    // this PC's own klanten).
    all.length > 1 || state.office.value
      ? h(
          "button",
          { class: state.overview.value ? "profile selected" : "profile", "aria-current": state.overview.value ? "page" : undefined, "data-test": "overview", onClick: () => void showOverview() },
          t("dashTitle"),
        )
      : null,
    h(
      "ul",
      { class: "profiles", id: "profile-list" },
      shown.map((p) =>
        h(ProfileItem, {
          key: p.id,
          id: p.id,
          name: displayName(p),
          tags: p.tags.join(", "),
          demo: p.demo,
          selected: p.id === selected && !state.overview.value,
          running: running.has(p.id),
          retrying: retrying.has(p.id),
          queued: queued.has(p.id),
        }),
      ),
    ),
    list.length > shown.length || list.length < all.length
      ? h("p", { class: "note", id: "found-count", role: "status", "data-test": "found-count" }, list.length === 0 ? t("foundNone") : t("foundSome", { shown: String(shown.length), count: String(list.length), all: String(all.length) }))
      : null,
    h("button", { class: "secondary", "data-test": "add-profile", onClick: () => editProfile(null) }, t("addProfile")),
    h("button", { class: "secondary", "data-test": "import-klanten", onClick: () => void openImport() }, t("importKlanten")),
    !state.demo.value ? h("button", { class: "secondary", "data-test": "try-demo", onClick: () => void openDemo() }, t("tryDemo")) : null,
  );
}

export function Welcome() {
  return h(
    "section",
    { class: "welcome card", "data-test": "welcome" },
    h("h2", {}, t("welcome")),
    h("p", {}, t("welcomeText")),
    h(
      "div",
      { class: "row" },
      h("button", { class: "primary", "data-test": "try-demo", onClick: () => void openDemo() }, t("tryDemo")),
      h("button", { class: "secondary", "data-test": "add-profile", onClick: () => editProfile(null) }, t("addProfile")),
      h("button", { class: "secondary", "data-test": "import-klanten", onClick: () => void openImport() }, t("importKlanten")),
      h("button", { class: "secondary", "data-test": "restore-from-copy", onClick: openRecovery }, t("restoreFromCopy")),
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
    input("f-tags", t("tagsLabel"), "tags", "text", false, { hint: t("tagsHint") }),
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
