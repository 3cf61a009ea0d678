// Typed calls of the Rust commands. The types come from ui/src/bindings.ts, generated from
// the Rust code (a Rust test fails when they are stale).
import { Channel, invoke } from "@tauri-apps/api/core";
import type {
  AppJobEvent,
  CallbackInput,
  CallbackTestResult,
  DemoInfo,
  ErrorPayload,
  HistoryEntry,
  LaunchInfo,
  Permissions,
  ProfileInput,
  ProfileView,
  ResumedEvent,
  ResumedJob,
  Saved,
  SessionInfo,
  Settings,
} from "./bindings";

/** Every command error has this shape; anything else (a bug) is wrapped into it. */
export function asError(e: unknown): ErrorPayload {
  if (e && typeof e === "object" && "code" in e && "message" in e) return e as ErrorPayload;
  return { code: "internal", message: String(e) };
}

export const api = {
  launchInfo: () => invoke<LaunchInfo>("launch_info"),
  profiles: () => invoke<ProfileView[]>("profiles"),
  saveProfile: (input: ProfileInput) => invoke<ProfileView>("save_profile", { input }),
  forgetProfile: (profileId: string) => invoke<void>("forget_profile", { profileId }),
  signIn: (profileId: string) => invoke<SessionInfo>("sign_in", { profileId }),
  signOut: (profileId: string) => invoke<void>("sign_out", { profileId }),
  environment: (profileId: string) => invoke<unknown>("environment", { profileId }),
  permissions: (profileId: string) => invoke<Permissions>("permissions", { profileId }),
  startBackup: (profileId: string, onEvent: (e: AppJobEvent) => void) => {
    const channel = new Channel<AppJobEvent>();
    channel.onmessage = onEvent;
    return invoke<string>("start_backup", { profileId, onEvent: channel });
  },
  saveBackup: (jobId: string, path: string) => invoke<Saved>("save_backup", { jobId, path }),
  cancelBackup: (jobId: string) => invoke<void>("cancel_backup", { jobId }),
  history: (profileId: string | null) => invoke<HistoryEntry[]>("history", { profileId }),
  showBackup: (historyId: string, select: boolean) => invoke<void>("show_backup", { historyId, select }),
  settings: () => invoke<Settings>("settings"),
  setSaveFolder: (folder: string | null) => invoke<Settings>("set_save_folder", { folder }),
  setCallback: (input: CallbackInput) => invoke<Settings>("set_callback", { input }),
  testCallback: (profileId: string) => invoke<CallbackTestResult>("test_callback", { profileId }),
  resumeBackups: (onEvent: (e: ResumedEvent) => void) => {
    const channel = new Channel<ResumedEvent>();
    channel.onmessage = onEvent;
    return invoke<ResumedJob[]>("resume_backups", { onEvent: channel });
  },
  startDemo: () => invoke<DemoInfo>("start_demo"),
};
