// Kluis's window: header (demo label, session, language), profiles, the tabs, and one live
// region. Preact components over the state's signals: each re-renders when a signal it reads
// changes, and Preact updates only the DOM that differs (inputs keep their text, caret and
// focus while a backup reports progress).
import { h, render } from "preact";
import { editProfile } from "./actions/profiles";
import { refreshDashboard, refreshSettings } from "./actions/refresh";
import { showError } from "./actions/run";
import { boot, signIn, signOut } from "./actions/session";
import { tellLanguage } from "./actions/settings";
import { ErrorBody, errorTitle } from "./errors";
import { language, languages, setLanguage, t, type Key, type Language } from "./i18n";
import { displayName, profileName, selectedProfile, state, type Tab } from "./state";
import { Announcer, BackupPanel } from "./views/backup";
import { ConfirmDialog } from "./views/confirm";
import { Dashboard } from "./views/dashboard";
import { EnvironmentPanel } from "./views/environment";
import { HistoryPanel } from "./views/history";
import { ImportPanel } from "./views/imports";
import { ProfileForm, ProfileList, Welcome } from "./views/profiles";
import { RecoverPanel } from "./views/recover";
import { SettingsPanel } from "./views/settings";

/** The language menu: the window speaks the choice at once, and the tray from then on. */
function chooseLanguage(choice: Language): void {
  setLanguage(choice);
  void tellLanguage(choice);
}

function Header() {
  // The dashboard is about every klant: no one klant's session stands over it.
  const profile = state.overview.value ? undefined : selectedProfile.value;
  const signedIn = profile !== undefined && state.signedIn.value.has(profile.id);
  // Signed in, but a job of this klant finds the service silent: not shown as all green.
  const silent = profile !== undefined && state.jobs.value.some((j) => j.profileId === profile.id && j.view.phase === "waiting" && j.view.silentSince !== null);
  return h(
    "header",
    { class: "top" },
    h("div", { class: "brand" }, h("img", { src: "/icon.png", alt: "", width: 32, height: 32 }), h("h1", {}, t("appTitle"))),
    state.demo.value ? h("p", { class: "demo-badge", "data-test": "demo-badge", title: state.demoBaseUrl.value ?? "" }, t("demoBadge")) : null,
    h(
      "div",
      { class: "session", "data-test": "session" },
      profile
        ? h(
            "span",
            { class: silent ? "dot warn" : signedIn ? "dot on" : "dot" },
            signedIn ? t("signedInAs", { user: `${profile.username} (${displayName(profile)})` }) : t("notSignedIn"),
            silent ? ` — ${t("serviceSilentShort")}` : "",
          )
        : null,
      profile && signedIn ? h("button", { class: "link", onClick: () => void signOut() }, t("signOut")) : null,
      profile && !signedIn ? h("button", { class: "link", onClick: () => void signIn() }, t("signIn")) : null,
      profile ? h("button", { class: "link", "data-test": "edit-profile", onClick: () => editProfile(profile) }, t("editProfile")) : null,
      h("label", { for: "language", class: "visually-hidden" }, t("language")),
      h(
        "select",
        { id: "language", value: language(), onChange: (e: Event) => chooseLanguage((e.target as HTMLSelectElement).value as Language) },
        Object.keys(languages).map((l) => h("option", { key: l, value: l }, l === "nl" ? "Nederlands" : "English")),
      ),
    ),
  );
}

const allTabs: [Tab, Key][] = [["backup", "tabBackup"], ["history", "tabHistory"], ["environment", "tabEnvironment"], ["settings", "tabSettings"]];

function Tabs() {
  const current = state.tab.value;
  // Arrows move to the next or previous tab, Home and End to the first or last (the ARIA
  // tabs pattern); the focus follows.
  const onKeyDown = (i: number) => (e: KeyboardEvent) => {
    const n = allTabs.length;
    const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i + n - 1) % n, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = allTabs[to][0];
    state.tab.value = next;
    document.getElementById(`tab-${next}`)?.focus();
  };
  return h(
    "div",
    { role: "tablist", class: "tabs", "aria-label": t("appTitle") },
    allTabs.map(([tab, key], i) =>
      h(
        "button",
        {
          key: tab,
          role: "tab",
          id: `tab-${tab}`,
          "aria-selected": current === tab ? "true" : "false",
          "aria-controls": "panel",
          tabIndex: current === tab ? 0 : -1,
          "data-test": `tab-${tab}`,
          onClick: () => (state.tab.value = tab),
          onKeyDown: onKeyDown(i),
        },
        t(key),
      ),
    ),
  );
}

const panels = { backup: BackupPanel, history: HistoryPanel, environment: EnvironmentPanel, settings: SettingsPanel };

function Panel() {
  const tab = state.tab.value;
  return h("div", { role: "tabpanel", id: "panel", "aria-labelledby": `tab-${tab}` }, h(panels[tab], {}));
}

/** The last action's error, named for its klant when it is about one. */
function ErrorBanner() {
  const shown = state.error.value;
  if (!shown) return null;
  const e = shown.error;
  return h(
    "div",
    { class: "error banner", role: "alert", "data-test": "error" },
    h("strong", {}, shown.profileId ? `${profileName(shown.profileId)}: ${errorTitle(e)}` : errorTitle(e)),
    h(ErrorBody, { error: e, testId: "error-message" }),
    h("button", { class: "icon", "aria-label": t("cancel"), onClick: () => (state.error.value = null) }, "×"),
  );
}

function Main() {
  if (state.recovering.value) return h(RecoverPanel, {});
  if (state.importing.value) return h(ImportPanel, {});
  if (state.editing.value) return h(ProfileForm, {});
  if (state.profiles.value.length === 0) return h(Welcome, {});
  if (state.overview.value) return h(Dashboard, {});
  return h("div", {}, h(Tabs, {}), h(Panel, {}));
}

function App() {
  return h(
    "div",
    { class: state.busy.value ? "shell busy" : "shell" },
    h(Header, {}),
    h("div", { class: "body" }, state.profiles.value.length > 0 ? h(ProfileList, {}) : null, h("main", { class: state.overview.value && !state.recovering.value && !state.importing.value && !state.editing.value ? "wide" : undefined }, h(ErrorBanner, {}), h(Main, {}))),
    h(ConfirmDialog, {}),
    h(Announcer, {}),
  );
}

document.documentElement.lang = language();
// A waiting job shows its elapsed time, a downloading one whether it stalled: the clock ticks
// each second while one waits or downloads (only those texts read it).
setInterval(() => {
  if (state.jobs.value.some((j) => j.view.phase === "waiting" || j.view.phase === "downloading")) state.now.value = Date.now();
}, 1000);
// The dashboard's ages and "overdue" move on with time even when nothing runs.
setInterval(() => {
  if (state.overview.value) void refreshDashboard().then(() => (state.now.value = Date.now()));
}, 60_000);
// Ctrl+K (⌘K), or / where nothing is being typed, goes to the search over the klanten.
document.addEventListener("keydown", (e) => {
  const typing = e.target instanceof HTMLElement && (e.target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName));
  const wanted = ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") || (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey);
  const find = document.getElementById("find") as HTMLInputElement | null;
  if (!wanted || !find) return;
  e.preventDefault();
  find.focus();
  find.select();
});
// The tray may have paused or resumed the plans while the window was elsewhere.
window.addEventListener("focus", () => void refreshSettings().catch(() => undefined));
const root = document.getElementById("app");
if (root) render(h(App, {}), root);
boot().catch((e) => {
  showError(e, null);
});

