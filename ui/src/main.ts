// Kluis's window: header (demo label, session, language), profiles, and the tabs.
import * as actions from "./actions";
import { asError } from "./api";
import { h } from "./dom";
import { language, languages, setLanguage, t, type Key, type Language } from "./i18n";
import { onRender, render, selectedProfile, state, type Tab } from "./state";
import { backupView } from "./views/backup";
import { environmentView } from "./views/environment";
import { historyView } from "./views/history";
import { profileForm, profileList, welcome } from "./views/profiles";
import { settingsView } from "./views/settings";

const errorTitles: Record<string, Key> = { auth_failed: "errAuth", permission_denied: "errPermission", network: "errNetwork" };

function header(): HTMLElement {
  const profile = selectedProfile();
  const signedIn = profile && state.signedIn.has(profile.id);
  const langSelect = h(
    "select",
    { id: "language", onchange: (e: Event) => { setLanguage((e.target as HTMLSelectElement).value as Language); render(); } },
    ...Object.keys(languages).map((l) => h("option", { value: l, selected: l === language() }, l === "nl" ? "Nederlands" : "English")),
  );
  return h(
    "header",
    { class: "top" },
    h("div", { class: "brand" }, h("img", { src: "/icon.png", alt: "", width: 32, height: 32 }), h("h1", {}, t("appTitle"))),
    state.demo ? h("p", { class: "demo-badge", "data-test": "demo-badge", title: state.demoBaseUrl ?? "" }, t("demoBadge")) : null,
    h(
      "div",
      { class: "session", "data-test": "session" },
      profile
        ? h(
            "span",
            { class: signedIn ? "dot on" : "dot" },
            signedIn ? t("signedInAs", { user: `${profile.username} (${profile.name})` }) : t("notSignedIn"),
          )
        : null,
      profile && signedIn ? h("button", { class: "link", onclick: () => void actions.signOut() }, t("signOut")) : null,
      profile && !signedIn ? h("button", { class: "link", onclick: () => void actions.signIn() }, t("signIn")) : null,
      profile ? h("button", { class: "link", "data-test": "edit-profile", onclick: () => { state.editing = profile; render(); } }, t("editProfile")) : null,
      profile ? h("button", { class: "link danger", onclick: () => void actions.forget() }, t("forget")) : null,
      h("label", { for: "language", class: "visually-hidden" }, t("language")),
      langSelect,
    ),
  );
}

function tabs(): HTMLElement {
  const all: [Tab, Key][] = [["backup", "tabBackup"], ["history", "tabHistory"], ["environment", "tabEnvironment"], ["settings", "tabSettings"]];
  const list = h("div", { role: "tablist", class: "tabs", "aria-label": t("appTitle") });
  all.forEach(([tab, key], i) => {
    const selected = state.tab === tab;
    list.append(
      h(
        "button",
        {
          role: "tab",
          id: `tab-${tab}`,
          "aria-selected": selected ? "true" : "false",
          "aria-controls": "panel",
          tabindex: selected ? 0 : -1,
          "data-test": `tab-${tab}`,
          onclick: () => { state.tab = tab; render(); },
          onkeydown: (e: Event) => {
            const key = (e as KeyboardEvent).key;
            if (key !== "ArrowRight" && key !== "ArrowLeft") return;
            const next = all[(i + (key === "ArrowRight" ? 1 : all.length - 1)) % all.length][0];
            state.tab = next;
            render();
            document.getElementById(`tab-${next}`)?.focus();
          },
        },
        t(key),
      ),
    );
  });
  return list;
}

function panel(): HTMLElement {
  const content = { backup: backupView, history: historyView, environment: environmentView, settings: settingsView }[state.tab]();
  return h("div", { role: "tabpanel", id: "panel", "aria-labelledby": `tab-${state.tab}` }, content);
}

function errorBanner(): HTMLElement | null {
  const e = state.error;
  if (!e) return null;
  return h(
    "div",
    { class: "error banner", role: "alert", "data-test": "error" },
    h("strong", {}, t(errorTitles[e.code] ?? "errOther")),
    " ",
    h("span", { "data-test": "error-message" }, e.message),
    h("button", { class: "icon", "aria-label": t("cancel"), onclick: () => { state.error = null; render(); } }, "×"),
  );
}

function page(): HTMLElement {
  let main: HTMLElement;
  if (state.editing) main = profileForm(state.editing === "new" ? null : state.editing);
  else if (state.profiles.length === 0) main = welcome();
  else main = h("div", {}, tabs(), panel());
  return h(
    "div",
    { class: state.busy ? "shell busy" : "shell" },
    header(),
    h("div", { class: "body" }, state.profiles.length > 0 ? profileList() : null, h("main", {}, errorBanner(), main)),
  );
}

/** Re-renders the page, keeping keyboard focus on the element that had it. */
function draw(): void {
  const root = document.getElementById("app");
  if (!root) return;
  const focused = document.activeElement as HTMLElement | null;
  const focusKey = focused?.id || focused?.getAttribute("data-test");
  root.replaceChildren(page());
  if (focusKey) (document.getElementById(focusKey) ?? document.querySelector<HTMLElement>(`[data-test="${focusKey}"]`))?.focus();
}

onRender(draw);
document.documentElement.lang = language();
// The waiting stage shows elapsed time: redraw it every second while waiting.
setInterval(() => {
  if (state.backup.phase === "waiting") render();
}, 1000);
draw();
actions.boot().catch((e) => {
  state.error = asError(e);
  render();
});
