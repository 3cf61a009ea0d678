// The UI's state and a re-render hook. Views read it and call actions; actions change it and
// ask for a render. Nothing secret is ever kept here: the UI never receives a secret back.
import type { HistoryEntry, Permissions, ProfileView, Settings } from "./bindings";
import type { BackupView } from "./backup-state";
import type { ErrorPayload } from "./bindings";

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
  settings: { save_folder: null } as Settings,
  backup: { phase: "idle" } as BackupView,
  jobId: null as string | null,
  /** Profile the current backup belongs to. */
  jobProfile: null as string | null,
  error: null as ErrorPayload | null,
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
