// The UI's state and a re-render hook. Views read it and call actions; actions change it and
// ask for a render. Nothing secret is ever kept here: the UI never receives a secret back.
import type { CallbackTestResult, HistoryEntry, Permissions, ProfileView, Settings } from "./bindings";
import type { BackupView } from "./backup-state";
import type { UiError } from "./api";

/** A backup an earlier run left unfinished, being finished now. */
export type Resumed = { jobId: string; profileId: string; view: BackupView };

export type Tab = "backup" | "history" | "environment" | "settings";

export const state = {
  demo: false,
  demoBaseUrl: null as string | null,
  profiles: [] as ProfileView[],
  selected: null as string | null,
  /** Profile ids with a live session. */
  signedIn: new Set<string>(),
  editing: null as ProfileView | "new" | null,
  tab: "backup" as Tab,
  environment: null as unknown,
  permissions: null as Permissions | null,
  history: [] as HistoryEntry[],
  historyFilter: null as string | null,
  settings: { save_folder: null, callback: { kind: "loopback" }, relay_secret_saved: false } as Settings,
  resumed: [] as Resumed[],
  /** The last "Test connection": its result or error; `testing` while it runs. */
  callbackTest: null as { ok: CallbackTestResult } | { error: UiError } | "testing" | null,
  callbackSaved: false,
  backup: { phase: "idle" } as BackupView,
  jobId: null as string | null,
  /** Profile the current backup belongs to. */
  jobProfile: null as string | null,
  error: null as UiError | null,
  busy: false,
};

let renderer: () => void = () => {};

export function onRender(fn: () => void): void {
  renderer = fn;
}

export function render(): void {
  renderer();
}

export function selectedProfile(): ProfileView | undefined {
  return state.profiles.find((p) => p.id === state.selected);
}
