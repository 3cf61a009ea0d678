// Typed calls of the Rust commands. The types come from ui/src/bindings.ts, generated from
// the Rust code (a Rust test fails when they are stale).
import { Channel, invoke } from "@tauri-apps/api/core";
import type {
  AppJobEvent,
  UpdateView,
  BandwidthLimit,
  BucketInput,
  Entry,
  HostKey,
  RestoreProgress,
  RestoreSummary,
  CarriedOn,
  FoundCopies,
  RecoverProgress,
  HeldCopy,
  Field,
  ManyChange,
  ManyPreview,
  ImportDefaults,
  ImportPreview,
  ImportProgress,
  ImportResult,
  RoundTest,
  SftpInput,
  SftpServer,
  CallbackInput,
  CallbackTestResult,
  DemoInfo,
  EncryptionInput,
  ErrorPayload,
  HistoryEntry,
  KlantStatus,
  LaunchInfo,
  MailInput,
  MailSettings,
  OfficeInvite,
  OfficeJoined,
  OfficeJoinInput,
  OfficeMembership,
  OfficeView,
  Permissions,
  PlanInput,
  PlannedEvent,
  ProfileInput,
  ProfileView,
  KitMade, ReportExport,
  ReportRequest,
  ResumedEvent,
  ResumedJob,
  Retention,
  Saved,
  SessionInfo,
  Language,
  Settings,
  TrayAction,
  VerifyReport,
} from "./bindings";

/** An error as the UI shows it: a command's `{code, message}`, or "internal" for anything
 * else that rejects (a bug, or Tauri refusing a call before it reaches the command). */
export type UiError = Omit<ErrorPayload, "code"> & { code: ErrorPayload["code"] | "internal" };

/** Every command error has this shape; anything else (a bug) is wrapped into it. */
export function asError(e: unknown): UiError {
  if (e && typeof e === "object" && "code" in e && "message" in e) return e as ErrorPayload;
  return { code: "internal", message: String(e) };
}

export const api = {
  launchInfo: () => invoke<LaunchInfo>("launch_info"),
  profiles: () => invoke<ProfileView[]>("profiles"),
  saveProfile: (input: ProfileInput) => invoke<ProfileView>("save_profile", { input }),
  forgetProfile: (profileId: string) => invoke<void>("forget_profile", { profileId }),
  /** Rust opens the file dialog (no path leaves the webview). */
  chooseProfileCa: (profileId: string) => invoke<ProfileView>("choose_profile_ca", { profileId }),
  clearProfileCa: (profileId: string) => invoke<ProfileView>("clear_profile_ca", { profileId }),
  signIn: (profileId: string) => invoke<SessionInfo>("sign_in", { profileId }),
  signOut: (profileId: string) => invoke<void>("sign_out", { profileId }),
  environment: (profileId: string) => invoke<unknown>("environment", { profileId }),
  permissions: (profileId: string) => invoke<Permissions>("permissions", { profileId }),
  startBackup: (profileId: string, onEvent: (e: AppJobEvent) => void) => {
    const channel = new Channel<AppJobEvent>();
    channel.onmessage = onEvent;
    return invoke<string>("start_backup", { profileId, onEvent: channel });
  },
  /** Rust opens the save dialog (no path ever leaves the webview); null: the dialog was cancelled. */
  saveBackup: (jobId: string) => invoke<Saved | null>("save_backup", { jobId }),
  cancelBackup: (jobId: string) => invoke<void>("cancel_backup", { jobId }),
  history: (profileId: string | null) => invoke<HistoryEntry[]>("history", { profileId }),
  showBackup: (historyId: string, select: boolean) => invoke<void>("show_backup", { historyId, select }),
  /** The copies of a saved backup that the copy targets hold (what Contents can read instead). */
  backupCopies: (historyId: string) => invoke<HeldCopy[]>("backup_copies", { historyId }),
  /** History → Contents: every entry of a saved backup (an encrypted one opened with its klant's passphrase), or of its copy on copy target `copy` (fetched back). */
  backupContents: (historyId: string, copy: string | null) => invoke<Entry[]>("backup_contents", { historyId, copy }),
  /** Restore…: the entries at or under `only` (none: all) of the backup, or of its copy on `copy`, into a folder Rust's dialog picks; null when cancelled. */
  restoreBackup: (historyId: string, copy: string | null, only: string[], onProgress: (p: RestoreProgress) => void) => {
    const channel = new Channel<RestoreProgress>();
    channel.onmessage = onProgress;
    return invoke<RestoreSummary | null>("restore_backup", { historyId, copy, only, onProgress: channel });
  },
  /** Test restore: the backup and then each of its copies restored into a temporary folder, checked, recorded in the history. */
  testRestore: (historyId: string) => invoke<RoundTest[]>("test_restore", { historyId }),
  settings: () => invoke<Settings>("settings"),
  /** Rust opens the folder dialog; the settings come back unchanged when it was cancelled. */
  chooseSaveFolder: () => invoke<Settings>("choose_save_folder"),
  clearSaveFolder: () => invoke<Settings>("clear_save_folder"),
  /** Rust opens a file dialog for cloudflared; the tunnel setting comes back with it. */
  chooseTunnelProgram: () => invoke<Settings>("choose_tunnel_program"),
  setCallback: (input: CallbackInput) => invoke<Settings>("set_callback", { input }),
  testCallback: (profileId: string) => invoke<CallbackTestResult>("test_callback", { profileId }),
  resumeBackups: (onEvent: (e: ResumedEvent) => void) => {
    const channel = new Channel<ResumedEvent>();
    channel.onmessage = onEvent;
    return invoke<ResumedJob[]>("resume_backups", { onEvent: channel });
  },
  startDemo: () => invoke<DemoInfo>("start_demo"),
  openDemo: () => invoke<null>("open_demo"),
  /** Every profile, a few at a time, into the save folder; resolves when the last has started. */
  backupAll: () => invoke<number>("backup_all"),
  /** Every running backup cancelled, and Backup all's waiting klanten not started. */
  cancelAll: () => invoke<number>("cancel_all"),
  /** Every klant's standing: last verified backup, last failure, next due, 30 days. */
  dashboard: () => invoke<KlantStatus[]>("dashboard"),
  /** Settings → desktop notifications on failures and overdue klanten. */
  setLanguage: (language: Language) => invoke<Settings>("set_language", { language }),
  setNotifyDesktop: (on: boolean) => invoke<Settings>("set_notify_desktop", { on }),
  /** "Send test": a desktop notification now. */
  testNotification: () => invoke<void>("test_notification"),
  /** What the tray menu does (Open, Backup all now, Pause/Resume plans, Quit) — the UI's
   * "Pause plans" takes this path too, so the tray's check mark follows. */
  trayAction: (action: TrayAction) => invoke<void>("tray_action", { action }),
  /** Settings → Office: the office this PC joined (null: none), joining (the keys go to the
   * keyring; the office key comes back only when this PC made it, to be shown once), leaving. */
  officeMembership: () => invoke<OfficeMembership | null>("office_membership"),
  joinOffice: (input: OfficeJoinInput) => invoke<OfficeJoined | null>("join_office", { input }),
  /** Leaves the office; why this PC's key could not be revoked at the hub, if it could not. */
  leaveOffice: () => invoke<string | null>("leave_office"),
  /** Add a PC: a join code for the office's next PC, shown once. */
  inviteOfficePc: (pc: string) => invoke<OfficeInvite>("invite_office_pc", { pc }),
  /** The dashboard's Office: every klant of every PC, what needs attention flagged. */
  officeView: () => invoke<OfficeView>("office_view"),
  /** Settings → e-mail through the office's SMTP server (the password goes to the keyring). */
  /** Settings → e-mail as saved (null: not set up). */
  mail: () => invoke<MailSettings | null>("mail"),
  setMail: (input: MailInput) => invoke<MailSettings | null>("set_mail", { input }),
  removeMail: () => invoke<void>("remove_mail"),
  /** "Send test": a mail now, through the saved settings. */
  testMail: () => invoke<void>("test_mail"),
  /** Settings → start Kluis at login (in the tray). */
  startAtLogin: () => invoke<boolean>("start_at_login"),
  setStartAtLogin: (on: boolean) => invoke<boolean>("set_start_at_login", { on }),
  /** Settings → how unattended backups' files are named ("" for the default). */
  setFileNameTemplate: (template: string) => invoke<Settings>("set_file_name_template", { template }),
  /** Settings → one download speed limit for every download (null: none). */
  setBandwidth: (limit: BandwidthLimit | null) => invoke<Settings>("set_bandwidth", { limit }),
  /** Settings → the free space a backup's disk must have before it is asked for (MiB; null: the default). */
  setMinFree: (mib: number | null) => invoke<Settings>("set_min_free", { mib }),
  addCopyFolder: (name: string) => invoke<Settings>("add_copy_folder", { name }),
  /** "Add a bucket": tested, then saved (its secret key to the keyring). */
  addCopyBucket: (input: BucketInput) => invoke<Settings>("add_copy_bucket", { input }),
  /** "Connect" of an SFTP server: the host key it shows (read without logging in). */
  sftpHostKey: (server: SftpServer) => invoke<HostKey>("sftp_host_key", { server }),
  /** "Trust and add": tested on a server showing the trusted key, then saved (its secret to the keyring). */
  addCopySftp: (input: SftpInput) => invoke<Settings>("add_copy_sftp", { input }),
  /** A copy target's own retention rule (null: every copy is kept). */
  setCopyTargetRule: (targetId: string, rule: Retention | null) => invoke<Settings>("set_copy_target_rule", { targetId, rule }),
  testCopyTarget: (targetId: string) => invoke<void>("test_copy_target", { targetId }),
  removeCopyTarget: (targetId: string) => invoke<Settings>("remove_copy_target", { targetId }),
  setCopyTo: (profileId: string, targetIds: string[] | null) => invoke<ProfileView>("set_copy_to", { profileId, targetIds }),
  setUnattendedAtOnce: (n: number) => invoke<Settings>("set_unattended_at_once", { n }),
  setPlan: (profileId: string, input: PlanInput) => invoke<ProfileView>("set_plan", { profileId, input }),
  /** The klant's outside monitor (a ping URL; null removes it). The URL never comes back. */
  setMonitor: (profileId: string, pingUrl: string | null) => invoke<ProfileView>("set_monitor", { profileId, pingUrl }),
  testMonitor: (profileId: string) => invoke<void>("test_monitor", { profileId }),
  /** The klant's retention rule (null: keep every backup); applied after each save. */
  setRetention: (profileId: string, rule: Retention | null) => invoke<ProfileView>("set_retention", { profileId, rule }),
  /** The backups `rule` would remove now, newest first (nothing is removed). */
  previewRetention: (profileId: string, rule: Retention) => invoke<HistoryEntry[]>("preview_retention", { profileId, rule }),
  /** How the klant's backups are encrypted (a passphrase goes to the keyring, never back). */
  setEncryption: (profileId: string, input: EncryptionInput) => invoke<ProfileView>("set_encryption", { profileId, input }),
  /** Read the klant's backups again once a month, after a save. */
  setVerifyMonthly: (profileId: string, on: boolean) => invoke<ProfileView>("set_verify_monthly", { profileId, on }),
  setRestoreTestMonthly: (profileId: string, on: boolean) => invoke<ProfileView>("set_restore_test_monthly", { profileId, on }),
  /** "Verify backups": every kept backup read again; the findings go to the history. */
  verifyBackups: () => invoke<VerifyReport>("verify_backups"),
  /** A period's backups for auditors, saved where the user chooses in a native save dialog
   * (null: the dialog was cancelled, nothing written). */
  exportReport: (request: ReportRequest) => invoke<ReportExport | null>("export_report", { request }),
  /** "Make the recovery kit…": Rust makes the kit and writes its page (which holds the private
   * key, never sent here) where its native save dialog says (null: cancelled, nothing made). */
  /** Rust writes the kit's page where its save dialog says (with the copy targets' own secrets when asked). */
  makeRecoveryKit: (withTargetSecrets: boolean) => invoke<KitMade | null>("make_recovery_kit", { withTargetSecrets }),
  /** Use the office's kit…: Rust reads the kit's key from the file its dialog picks (null: cancelled). */
  joinRecoveryKit: () => invoke<KitMade | null>("join_recovery_kit"),
  /** Restore from a copy…: what copy target `targetId` holds that the kit's key opens — the key pasted, or (null) read by Rust from the kit's file it asks for in its dialog (null back: cancelled). */
  findCopies: (targetId: string, pastedKey: string | null) => invoke<FoundCopies | null>("find_copies", { targetId, pastedKey }),
  /** The backup found at `location` restored into a folder Rust's dialog asks for (null: cancelled). */
  restoreFound: (location: string, onProgress: (p: RecoverProgress) => void) => {
    const channel = new Channel<RecoverProgress>();
    channel.onmessage = onProgress;
    return invoke<RestoreSummary | null>("restore_found", { location, onProgress: channel });
  },
  cancelRestoreFound: () => invoke<void>("cancel_restore_found"),
  /** Carry on for this office: this computer takes over the lost one's klanten and copies, and keeps the kit. */
  carryOn: (computer: string, replaceKit: boolean) => invoke<CarriedOn>("carry_on", { computer, replaceKit }),
  /** Leaving Restore from a copy…: Rust forgets the key. */
  closeRecovery: () => invoke<void>("close_recovery"),
  /** Import klanten…: Rust opens the file dialog, reads the file and previews each row (null: cancelled). The file's passwords stay in Rust. */
  openImport: () => invoke<ImportPreview | null>("open_import"),
  /** Field `field` read from column `column` (null: not imported). */
  importColumn: (field: Field, column: number | null) => invoke<ImportPreview>("import_column", { field, column }),
  /** The address and api key for rows without one (the key goes to Rust once, never back). */
  importDefaults: (defaults: ImportDefaults) => invoke<ImportPreview>("import_defaults", { defaults }),
  /** Passwords from a password manager's export, picked in Rust's file dialog. */
  importVault: () => invoke<ImportPreview>("import_vault"),
  /** Each klant signed in and saved when it signs in; `onRow` hears each row as it ends. */
  runImport: (onRow: (p: ImportProgress) => void) => {
    const channel = new Channel<ImportProgress>();
    channel.onmessage = onRow;
    return invoke<ImportResult>("run_import", { onRow: channel });
  },
  /** The rows not begun are not tried; those signing in finish. */
  cancelImport: () => invoke<void>("cancel_import"),
  /** The open file's table and passwords forgotten. */
  closeImport: () => invoke<void>("close_import"),
  /** The klant list as CSV (no secret), where Rust's save dialog says (null: cancelled). */
  exportKlanten: () => invoke<string | null>("export_klanten"),
  /** The klant's own save folder, picked in Rust's folder dialog (the profile comes back unchanged when it was cancelled). */
  chooseKlantFolder: (profileId: string) => invoke<ProfileView>("choose_klant_folder", { profileId }),
  clearKlantFolder: (profileId: string) => invoke<ProfileView>("clear_klant_folder", { profileId }),
  /** Edit many at once: per klant, the backups a new rule would remove now (nothing changes). */
  previewMany: (ids: string[], change: ManyChange) => invoke<ManyPreview[]>("preview_many", { ids, change }),
  /** The change set for every klant in `ids` (checked whole first: refused, nobody changes). */
  editMany: (ids: string[], change: ManyChange) => invoke<ProfileView[]>("edit_many", { ids, change }),
  /** Settings → Updates: this version, whether a newer one is out, whether it installs itself. */
  updateView: () => invoke<UpdateView>("update_view"),
  /** Asks the update server now. */
  lookForUpdate: () => invoke<UpdateView>("look_for_update"),
  /** Downloads the newer Kluis (verified) and installs it; the app then ends. Refused while a backup runs or a plan is due. */
  installUpdate: () => invoke<UpdateView>("install_update"),
  setInstallUpdates: (automatic: boolean) => invoke<UpdateView>("set_install_updates", { automatic }),
  /** The events of backups their plans start (each tagged with its job and klant). */
  watchPlanned: (onEvent: (e: PlannedEvent) => void) => {
    const channel = new Channel<PlannedEvent>();
    channel.onmessage = onEvent;
    return invoke<void>("watch_planned", { onEvent: channel });
  },
};
