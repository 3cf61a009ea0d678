// The whole UI in jsdom, with the Rust side replaced by Tauri's mockIPC.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Field, FoundBackup, FoundCopies, ImportDefaults, ImportPreview, ImportProgress, OfficeMembership, OfficeView, RecoverProgress, RowOutcome, UpdateView } from "./bindings";
import type { AppJobEvent, BucketInput, SftpInput, HistoryEntry, KlantStatus, MailInput, MailSettings, Plan, PlannedEvent, ProfileView, ReportRequest, ResumedEvent, Retention, Settings, VerifyReport } from "./bindings";
import { GATHER_MS } from "./coalesce";
import { FIRST_ROWS, OVERSCAN } from "./dashboard";
import { languages } from "./i18n";

const demoProfile: ProfileView = { id: "demo", name: "Demo", base_url: "https://127.0.0.1:1/webservice_v2", username: "demo", openapi_url: null, demo: true, trusted_cas: [], plan: null, monitor: false, next_backup_ms: null, retention: null, verify_monthly: false, restore_test_monthly: true, encryption: null, copy_to: null, tags: [], save_folder: null };

/** A klant's standing as the dashboard receives it: never backed up, no plan, unless told. */
function klant(id: string, name: string, change: Partial<KlantStatus> = {}): KlantStatus {
  return { profile_id: id, name, plan: null, last_success_ms: null, last_success_bytes: null, last_success_path: null, last_error: null, running: false, next_due_ms: null, overdue: false, days: Array(30).fill("free"), damaged: 0, copies: null, restore_test_failed: null, restore_test_overdue: false, office_backup: null, ...change };
}

type Calls = { cmd: string; args: Record<string, unknown> }[];

const defaultSettings: Settings = { save_folder: null, callback: { kind: "loopback" }, relay_secret_saved: false, unattended_at_once: 2, notify_desktop: true, paused_together: [], file_name_template: null, bandwidth: null, min_free_mib: null, copy_targets: [], install_updates: false, recovery: null };

/** The channel of the last `start_backup`, when the test sends the job's events itself. */
let heldBackup: { onmessage: (e: AppJobEvent) => void } | null = null;
/** The channel `watch_planned` gave: the test sends planned backups' events through it. */
let plannedChannel: { onmessage: (e: PlannedEvent) => void } | null = null;
/** A restore from a copy under way: its progress channel, and its end (cancelled or done). */
let restoreChannel: { onmessage: (p: RecoverProgress) => void } | null = null;
let finishRestore: ((cancelled: boolean) => void) | null = null;
/** What Rust finds on the copy target in the tests of Restore from a copy…. */
const foundBackup = (klant: string, name: string, change: Partial<FoundBackup> = {}): FoundBackup => ({ location: `${klant}/${name}`, klant, computer: "RECEPTIE", name, bytes: 2048, saved_ms: Date.UTC(2026, 10, 20, 2, 0), encrypted: "no", locked_until_ms: null, restore_test: null, proof: "catalog", on_target: true, ...change });
const found: FoundCopies = {
  target: "NAS",
  fingerprint: "KLUIS-ABCD-EFGH",
  backups: [foundBackup("Bakker", "owner backup 2026-11-20.zip.age", { encrypted: "passphrase", restore_test: [Date.UTC(2026, 10, 21), true] }), foundBackup("Bakker", "gone.zip", { on_target: false }), foundBackup("Visser", "to-recipient.zip.age", { encrypted: "recipient" })],
  computers: [{ id: "pc-receptie", name: "RECEPTIE", catalog_ms: Date.UTC(2026, 10, 20, 3, 0), carried_on_by: null }],
  made_from: "from RECEPTIE's catalog 7 of 2026-11-20 03:00 UTC",
  problems: [],
  other_kit: null,
};

/** Ends the pending `backup_all` (it resolves once the last klant has started). */
let finishBackupAll: (() => void) | null = null;

function fakeBackend(
  calls: Calls,
  options: { loginStart?: boolean | "refused"; demoStarted?: boolean; demoApp?: boolean; resumed?: ResumedEvent[]; holdBackup?: boolean; history?: HistoryEntry[]; dialogClosed?: boolean; profiles?: ProfileView[]; refuseSignIn?: string[]; saveFolder?: string; monitorDown?: boolean; dashboard?: KlantStatus[]; wouldRemove?: HistoryEntry[]; verifyReport?: VerifyReport; copyTargets?: Settings["copy_targets"]; update?: UpdateView; updateRefused?: string; mailUnreadable?: boolean; office?: OfficeMembership; officeView?: OfficeView; language?: Settings["language"] } = {},
) {
  let started = options.demoStarted ?? false;
  let settings: Settings = { ...defaultSettings, save_folder: options.saveFolder ?? null, copy_targets: options.copyTargets ?? [], language: options.language };
  let mail: MailSettings | null = null;
  let office: OfficeMembership | null = options.office ?? null;
  let copyTo: string[] | null = null;
  let loginStart = options.loginStart === true;
  let carriedOn: ProfileView[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    switch (cmd) {
      case "launch_info":
        return { demo: options.demoApp ?? false };
      case "settings":
        return settings;
      case "mail":
        if (options.mailUnreadable && !mail) throw { code: "config", message: "The e-mail settings in Kluis's settings file cannot be read (the file was changed by hand?), so no e-mail is sent: set E-mail again in Settings (the password stays in the keyring)." };
        return mail;
      case "open_demo":
        return null;
      case "set_callback":
        settings = { ...settings, callback: (args as { input: { setting: Settings["callback"] } }).input.setting };
        return settings;
      case "test_callback":
        return { transport: "webhook-site", millis: 42 };
      case "resume_backups": {
        const channel = (args as { onEvent: { onmessage: (e: ResumedEvent) => void } }).onEvent;
        const events = options.resumed ?? [];
        setTimeout(() => events.forEach((e) => channel.onmessage(e)), 0);
        return events.length ? [{ job_id: events[0].job_id, profile_id: "demo", stage: "accepted" }] : [];
      }
      case "profiles":
        return carriedOn.length > 0 ? carriedOn : (options.profiles ?? (started ? [demoProfile] : []));
      case "start_demo":
        started = true;
        return { base_url: demoProfile.base_url, profiles: [demoProfile], folder: "/home/user/.local/share/kluis/demo" };
      case "sign_in": {
        const id = (args as { profileId: string }).profileId;
        if (options.refuseSignIn?.includes(id)) throw { code: "auth_failed", message: "The service refused the api key, username or password." };
        return { profile_id: id, username: "demo" };
      }
      case "environment": {
        const id = (args as { profileId: string }).profileId;
        return { username: "demo", klant: { name: id === "demo" ? "Demo B.V." : `Administratie van ${id}` } };
      }
      case "permissions":
        return { source: "openapi", environment: "allowed", backup_owner: "allowed", webhook: "allowed" };
      case "history":
        return options.history ?? [];
      case "backup_contents":
        return [
          { name: "2025/", path: "2025", refused: null, kind: "folder", size: 0, compressed: 0, modified: "2025-03-01 14:22:06", encrypted: false },
          { name: "2025/grootboek.csv", path: "2025/grootboek.csv", refused: null, kind: "file", size: 2048, compressed: 512, modified: "2025-03-01 14:22:06", encrypted: false },
          { name: "2025/memoriaal.csv", path: "2025/memoriaal.csv", refused: null, kind: "file", size: 100, compressed: 80, modified: null, encrypted: false },
          { name: "../evil.txt", path: null, refused: "its name climbs out of the folder (..)", kind: "file", size: 4, compressed: 4, modified: null, encrypted: false },
        ];
      case "restore_backup": {
        const { onProgress, only } = args as { onProgress: { onmessage?: (p: unknown) => void }; only: string[] };
        onProgress.onmessage?.({ done: 1024, total: 2048 });
        if (!only.length) {
          // Everything: the climbing entry is left out, as Rust leaves it.
          const evil = { name: "../evil.txt", why: "its name climbs out of the folder (..)" };
          return { folder: "/home/u/Teruggezet", entries: 4, files: 2, folders: 1, bytes: 2148, not_restored: [evil] };
        }
        return { folder: "/home/u/Teruggezet", entries: 1, files: 1, folders: 0, bytes: 2048, not_restored: [] };
      }
      case "backup_copies":
        return [{ target_id: "t-nas", name: "NAS" }];
      case "test_restore":
        return [
          { record: { job: "h2", at_ms: 0, passed: false, entries: 2, bytes: 2148, took_ms: 1500, detail: "2025/memoriaal.csv: invalid checksum", target: null }, copy_on: null },
          { record: { job: "h2", at_ms: 0, passed: true, entries: 2, bytes: 2148, took_ms: 2500, detail: null, target: "t-nas" }, copy_on: "NAS" },
        ];
      case "dashboard":
        return options.dashboard ?? (options.profiles ?? (started ? [demoProfile] : [])).map((p) => klant(p.id, p.name));
      case "choose_profile_ca":
        return { ...(options.profiles?.[0] ?? demoProfile), trusted_cas: [{ subject: "CN=Office Proxy CA", sha256: "AB:CD" }] };
      case "forget_profile":
        started = false;
        return null;
      case "cancel_backup":
        return null;
      case "backup_all":
        return new Promise((resolve) => (finishBackupAll = () => resolve(2)));
      case "watch_planned":
        plannedChannel = (args as { onEvent: { onmessage: (e: PlannedEvent) => void } }).onEvent;
        return null;
      case "cancel_all":
        finishBackupAll?.();
        return 1;
      case "set_language":
        settings = { ...settings, language: (args as { language: Settings["language"] }).language };
        return settings;
      case "set_notify_desktop":
        settings = { ...settings, notify_desktop: (args as { on: boolean }).on };
        return settings;
      case "test_notification":
        if (options.monitorDown) throw { code: "config", message: "The desktop notification could not be shown (no session bus)." };
        return null;
      case "tray_action": {
        const { action } = args as { action: string };
        if (action === "pause_plans") settings = { ...settings, paused_together: ["bakker"] };
        else if (action === "resume_plans") settings = { ...settings, paused_together: [] };
        else throw { code: "internal", message: `unexpected tray action ${action}` };
        return null;
      }
      case "set_mail": {
        const { input } = args as { input: MailInput };
        if (!input.settings.from.includes("@")) throw { code: "config", message: `The sender "${input.settings.from}" is not an e-mail address; write it as name@example.nl.` };
        const to = input.settings.to.flatMap((list) => list.split(",")).map((s) => s.trim());
        mail = { ...input.settings, to, password_saved: mail?.password_saved || input.password !== null };
        return mail;
      }
      case "remove_mail":
        mail = null;
        return null;
      case "office_membership":
        return office;
      case "join_office": {
        const input = (args as { input: { hub: string; pc: string } }).input;
        office = { hub: input.hub, pc: input.pc, joined_ms: Date.UTC(2026, 10, 27, 9, 0) };
        return { membership: office, pcs: [input.pc], made_key: "kluis-office-key-" + "ab".repeat(32) };
      }
      case "leave_office":
        office = null;
        return null;
      case "invite_office_pc":
        return { pc: (args as { pc: string }).pc, code: "KLUIS-JOIN-eyJodWIiOiJodHRwcyJ9" };
      case "office_view":
        if (!options.officeView) throw { code: "config", message: "This PC is in no office." };
        return options.officeView;
      case "test_mail":
        if (options.monitorDown) throw { code: "mail", message: "The e-mail could not be sent through smtp.office.test:587 (connection refused)." };
        return null;
      case "set_file_name_template": {
        const { template } = args as { template: string };
        if (template && !template.includes("{date}")) throw { code: "config", message: "A file name template needs {date}, so each day's backup has a name of its own." };
        settings = { ...settings, file_name_template: template.trim() || null };
        return settings;
      }
      case "start_at_login":
        if (options.loginStart === "refused") throw { code: "config", message: "Starting at login is only available in the desktop app." };
        return loginStart;
      case "set_start_at_login":
        loginStart = (args as { on: boolean }).on;
        return loginStart;
      case "set_bandwidth":
        settings = { ...settings, bandwidth: (args as { limit: Settings["bandwidth"] }).limit };
        return settings;
      case "set_min_free":
        settings = { ...settings, min_free_mib: (args as { mib: number | null }).mib };
        return settings;
      case "join_recovery_kit":
        // Rust reads the kit's key from the file its dialog picks: the page gets the fingerprint.
        settings = { ...settings, recovery: { office_key: "age1office", fingerprint: "KLUIS-OFFICE-KIT", made_ms: Date.UTC(2026, 10, 27, 9, 0), pc_id: "pc2", pc_name: "BALIE" } };
        return { path: "/media/usb/kluis-recovery.key", fingerprint: "KLUIS-OFFICE-KIT", not_written: [] };
      case "find_copies": {
        // Rust reads the target with the key pasted, or with the kit's file its dialog picked.
        const { pastedKey } = args as { targetId: string; pastedKey: string | null };
        if (pastedKey !== null && !pastedKey.startsWith("AGE-SECRET-KEY-1")) throw { code: "config", message: "That is not a recovery key: give its AGE-SECRET-KEY-1… line or its 24 words." };
        if (pastedKey === "AGE-SECRET-KEY-1OTHER") return { ...found, backups: [], computers: [], made_from: "rebuilt from the copies' own records", other_kit: "No catalog here opens with the key given (KLUIS-OTHER)." };
        return found;
      }
      case "restore_found":
        restoreChannel = (args as { onProgress: { onmessage: (p: RecoverProgress) => void } }).onProgress;
        return new Promise((resolve, reject) => (finishRestore = (cancelled) => (cancelled ? reject({ code: "cancelled", message: "The backup was cancelled; nothing was saved." }) : resolve({ folder: "/home/office/Herstel", entries: 3, files: 2, folders: 1, bytes: 2048, not_restored: [] }))));
      case "cancel_restore_found":
        finishRestore?.(true);
        return null;
      case "carry_on":
        carriedOn = [{ ...demoProfile, id: "bakker", name: "Bakker", demo: false }];
        settings = { ...settings, recovery: { office_key: "age1office", fingerprint: "KLUIS-ABCD-EFGH", made_ms: Date.UTC(2026, 10, 26, 9, 30), pc_id: "pc2", pc_name: "NIEUW" } };
        return { lost: "RECEPTIE", klanten: [{ name: "Bakker", base_url: "https://service.example/webservice_v2", username: "bakker", copies: 2 }], added: 2, notes: ["\"Bakker\": its own save folder is not taken over."], not_written: [] };
      case "close_recovery":
        return null;
      case "make_recovery_kit":
        // Rust makes the kit and writes its page where its own dialog says: the page gets
        // where, and the fingerprint — never the key.
        settings = { ...settings, recovery: { office_key: "age1office", fingerprint: "KLUIS-ABCD-EFGH", made_ms: Date.UTC(2026, 10, 26, 9, 30), pc_id: "pc1", pc_name: "RECEPTIE" } };
        return { path: "/home/office/kluis-recovery-kit-2026-11-26.txt", fingerprint: "KLUIS-ABCD-EFGH", not_written: [] };
      case "add_copy_folder": {
        // Rust's folder dialog picks the folder: the page sends the name only.
        const { name } = args as { name: string };
        settings = { ...settings, copy_targets: [...settings.copy_targets, { id: `t-${name}`, name, place: { kind: "folder", path: "/mnt/nas/kluis" } }] };
        return settings;
      }
      case "add_copy_bucket": {
        const { input } = args as { input: BucketInput };
        const place = { kind: "s3" as const, ...input.place, ca_cert: input.own_ca ? "/etc/office-ca.pem" : null };
        settings = { ...settings, copy_targets: [...settings.copy_targets, { id: `t-${input.name}`, name: input.name, place }] };
        return settings;
      }
      case "sftp_host_key":
        return { fingerprint: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8", algorithm: "ssh-ed25519" };
      case "add_copy_sftp": {
        const { input } = args as { input: SftpInput };
        const login = input.place.login.method === "key" ? { method: "key" as const, key_file: "/home/office/.ssh/kluis_ed25519" } : input.place.login;
        const place = { kind: "sftp" as const, ...input.place, login };
        settings = { ...settings, copy_targets: [...settings.copy_targets, { id: `t-${input.name}`, name: input.name, place }] };
        return settings;
      }
      case "set_copy_target_rule": {
        const { targetId, rule } = args as { targetId: string; rule: Retention | null };
        settings = { ...settings, copy_targets: settings.copy_targets.map((t) => (t.id === targetId ? { ...t, keep: rule } : t)) };
        return settings;
      }
      case "test_copy_target":
        throw { code: "config", message: 'Copy target "NAS": the folder /mnt/nas/kluis is not there (is the share mounted, the disk plugged in?).' };
      case "remove_copy_target":
        settings = { ...settings, copy_targets: settings.copy_targets.filter((t) => t.id !== (args as { targetId: string }).targetId) };
        return settings;
      case "set_unattended_at_once":
        settings = { ...settings, unattended_at_once: (args as { n: number }).n };
        return settings;
      case "set_monitor": {
        const { pingUrl } = args as { pingUrl: string | null };
        if (pingUrl !== null && !pingUrl.startsWith("https://")) throw { code: "config", message: "The monitor's ping URL is not https." };
        return { ...demoProfile, monitor: pingUrl !== null };
      }
      case "preview_retention":
        return options.wouldRemove ?? [];
      case "set_encryption": {
        const { input } = args as { input: { kind: string; recipient?: string } };
        const encryption = input.kind === "passphrase" ? { kind: "passphrase" } : input.kind === "recipient" ? { kind: "recipient", recipient: input.recipient } : null;
        return { ...demoProfile, encryption };
      }
      case "set_copy_to":
        copyTo = (args as { targetIds: string[] | null }).targetIds;
        return { ...demoProfile, copy_to: copyTo };
      case "set_verify_monthly":
        return { ...demoProfile, verify_monthly: (args as { on: boolean }).on };
      case "set_restore_test_monthly":
        return { ...demoProfile, restore_test_monthly: (args as { on: boolean }).on };
      case "set_retention":
        return { ...demoProfile, retention: (args as { rule: Retention | null }).rule };
      case "verify_backups":
        return options.verifyReport ?? { verified: 0, bytes: 0, problems: [], copies_checked: 0, copy_problems: [] };
      case "export_report": {
        const { request } = args as { request: ReportRequest };
        if (options.dialogClosed) return null;
        if (request.to < request.from) throw { code: "config", message: "The report's period ends before it begins: --to is a later day than --from." };
        return { path: `/home/user/Downloads/kluis-report-${request.from}-${request.to}.${request.format === "csv" ? "csv" : "html"}`, backups: 3 };
      }
      case "test_monitor":
        if (options.monitorDown) throw { code: "network", message: "The monitor could not be pinged." };
        return null;
      case "set_plan": {
        const { input } = args as { input: { schedule: Plan["schedule"]; paused: boolean } };
        return { ...demoProfile, plan: { schedule: input.schedule, paused: input.paused, set_at_ms: 0 }, next_backup_ms: Date.UTC(2026, 10, 24, 2, 0) };
      }
      case "start_backup": {
        const channel = (args as { onEvent: { onmessage: (e: AppJobEvent) => void } }).onEvent;
        if (options.holdBackup) {
          heldBackup = channel;
          return "job-1";
        }
        const events: AppJobEvent[] = [
          { kind: "stage", stage: "requested" },
          { kind: "stage", stage: "accepted" },
          { kind: "stage", stage: "downloading" },
          { kind: "progress", bytes: 50, total: 100, bytes_per_sec: 1048576 },
          { kind: "staged", file_name: "owner-backup.zip", bytes: 100, sha256: "f".repeat(64) },
        ];
        setTimeout(() => events.forEach((e) => channel.onmessage(e)), 0);
        return "job-1";
      }
      case "choose_tunnel_program":
        settings = { ...settings, callback: { kind: "tunnel", program: "/opt/cloudflare/cloudflared" } };
        return settings;
      case "save_backup":
        return options.dialogClosed ? null : { path: "/home/user/chosen.zip", bytes: 100, sha256: "f".repeat(64) };
      case "choose_klant_folder":
        return { ...(options.profiles?.[0] ?? demoProfile), save_folder: "/mnt/klanten/bakker" };
      case "clear_klant_folder":
        return { ...(options.profiles?.[0] ?? demoProfile), save_folder: null };
      case "preview_many": {
        const { ids } = args as { ids: string[] };
        return ids.map((id) => ({ profile_id: id, would_remove: id === "bakker" ? 2 : 0 }));
      }
      case "edit_many": {
        const { ids } = args as { ids: string[] };
        return ids.map((id) => ({ ...demoProfile, id }));
      }
      case "open_import":
        importPreview = importedFile();
        return importPreview;
      case "import_column": {
        const { field, column } = args as { field: Field; column: number | null };
        importPreview = { ...importPreview!, columns: importPreview!.columns.map((c) => (c.field === field ? { field, column } : c)) };
        return importPreview;
      }
      case "import_defaults": {
        const { defaults } = args as { defaults: ImportDefaults };
        const rows = importPreview!.rows.map((r) => (r.problems.length === 1 && r.problems[0].startsWith("no api key") ? { ...r, action: "add" as const, problems: [] } : r));
        importPreview = { ...importPreview!, rows, base_url: defaults.base_url, office_key: importPreview!.office_key || !!defaults.api_key };
        return importPreview;
      }
      case "run_import": {
        const { onRow } = args as { onRow: { onmessage?: (p: ImportProgress) => void } };
        const outcomes: RowOutcome[] = importPreview!.rows.map((r) => ({
          line: r.line,
          name: r.name,
          outcome: r.action === "skip" ? "skipped" : r.name === "Visser" ? "wrong_password" : "added",
          why: r.action === "skip" ? r.problems.join("; ") : r.name === "Visser" ? "The service refused the api key, username or password." : null,
          moved_from: null,
        }));
        outcomes.forEach((outcome, index) => onRow.onmessage?.({ index, outcome }));
        return { outcomes, holding_passwords: [importPreview!.file] };
      }
      case "close_import":
        importPreview = null;
        return null;
      case "export_klanten":
        return "/home/user/kluis-klanten.csv";
      case "update_view":
      case "look_for_update":
        return options.update ?? { current: "0.1.0", state: { kind: "not_configured" }, automatic: false, installs_here: false, managed_by_it: false, unpacked: false };
      case "install_update":
        if (options.updateRefused) throw { code: "invalid_state", message: options.updateRefused };
        return options.update;
      case "set_install_updates":
        return { ...options.update, automatic: (args as { automatic: boolean }).automatic };
      default:
        throw { code: "internal", message: `unexpected ${cmd}` };
    }
  });
}

let importPreview: ImportPreview | null = null;

/** An office's list as Rust previews it: two klanten waiting for the office's api key, one
 * without a username. */
function importedFile(): ImportPreview {
  const row = (line: number, name: string, username: string, problems: string[], moves_from: string | null = null): ImportPreview["rows"][number] => ({
    line,
    action: problems.length ? "skip" : "add",
    name,
    username,
    base_url: "https://service.example/webservice_v2",
    moves_from,
    schedule: { kind: "daily", at: "02:00" },
    sets_retention: false,
    retention: null,
    tags: ["Jan"],
    has_password: true,
    has_api_key: false,
    problems,
  });
  const fields: Field[] = ["name", "username", "password", "api_key", "base_url", "plan", "retention", "tags"];
  const columns = fields.map((field) => ({ field, column: { name: 0, username: 1, password: 2, plan: 3 }[field as string] ?? null }));
  return {
    file: "/home/user/klanten.csv",
    header: ["Naam", "Gebruikersnaam", "Wachtwoord", "Plan", "Geheim"],
    columns,
    rows: [
      row(2, "Bakker B.V.", "bakker", ["no api key (a column, or the office's api key for every klant)"]),
      row(3, "Visser", "visser", ["no api key (a column, or the office's api key for every klant)"]),
      row(4, "Zonder", "", ["no username"]),
      row(5, "Jansen", "jansen", ["the row moves the klant from https://oud.example/webservice_v2 to https://service.example/webservice_v2: that needs the klant's password there (a password column, or the password manager's export), as the saved one is never sent to another address; or change the address in the klant's own form"], "https://oud.example/webservice_v2"),
    ],
    holds_passwords: true,
    vault: null,
    vault_logins: 0,
    base_url: "https://service.example/webservice_v2",
    office_key: false,
  };
}

/** The intervals each started UI set (its clock, the dashboard's minute): cleared after each
 * test, so that an earlier test's UI never calls into a later test's backend (a file that ran
 * past a minute on a slow machine counted an extra `dashboard` call). */
const uiIntervals: ReturnType<typeof setInterval>[] = [];

async function startUi(): Promise<void> {
  document.body.innerHTML = '<div id="app"></div>';
  vi.resetModules();
  const setInterval = globalThis.setInterval;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
    const id = setInterval(...args);
    uiIntervals.push(id);
    return id;
  }) as typeof setInterval;
  try {
    await import("./main");
  } finally {
    globalThis.setInterval = setInterval;
  }
}

afterEach(() => uiIntervals.splice(0).forEach((id) => clearInterval(id)));

/** The demo's app, opened on Settings, against a fake backend with `options`. */
async function openSettings(calls: Calls, options: Parameters<typeof fakeBackend>[1] = {}): Promise<void> {
  fakeBackend(calls, { demoStarted: true, ...options });
  await startUi();
  await settle();
  await click("tab-settings");
}

/** Lets pending work finish: IPC answers, and job events gathered for `GATHER_MS`. */
const settle = () => new Promise((r) => setTimeout(r, GATHER_MS + 10));
const byTest = (name: string) => document.querySelector<HTMLElement>(`[data-test="${name}"]`);
/** Clicks `name` and lets the UI update (Preact renders after the event, not inside it). */
async function click(name: string): Promise<void> {
  const el = byTest(name);
  expect(el, `[data-test="${name}"] is shown`).not.toBeNull();
  el!.click();
  await settle();
}
/** Types `text` into `input` as a user would (one input event per character). */
/** Sets the field `test` to `text` at once, as a paste would. */
async function fillIn(test: string, text: string): Promise<void> {
  const field = byTest(test) as HTMLInputElement;
  field.value = text;
  field.dispatchEvent(new Event("input", { bubbles: true }));
  await settle();
}

/** Chooses `value` in the select marked `test`. */
async function pick(test: string, value: string): Promise<void> {
  const select = byTest(test) as HTMLSelectElement;
  select.value = value;
  select.dispatchEvent(new Event("change", { bubbles: true }));
  await settle();
}

async function type(input: HTMLInputElement, text: string): Promise<void> {
  for (const ch of text) {
    const at = input.selectionStart ?? input.value.length;
    input.value = input.value.slice(0, at) + ch + input.value.slice(input.selectionEnd ?? at);
    input.setSelectionRange(at + 1, at + 1);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }
  await settle();
}

describe("Kluis UI", () => {
  let calls: Calls;

  /** Import klanten…: the rows and their problems shown; the office's api key sent once and
   * never kept on the page; a column changed; each row's outcome as it ends; that the file
   * still holds passwords said; closed, with Rust told to forget the file. */
  it("imports an office's list: preview, api key, columns, outcomes, and the file's passwords", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    fakeBackend(calls, { profiles: [other("bakker", "Bakker B.V.")] });
    await startUi();
    await settle();
    await click("import-klanten");
    expect(byTest("import-file")?.textContent).toContain("/home/user/klanten.csv");
    expect(byTest("import-summary")?.textContent).toContain("0 to add, 0 to update, 4 skipped");
    expect(byTest("import-rows")?.textContent).toContain("no api key");
    expect(byTest("import-moves")?.textContent, "a saved klant moved by a row is shown as a move").toContain(
      "Moves from https://oud.example/webservice_v2 to https://service.example/webservice_v2",
    );
    expect((byTest("import-run") as HTMLButtonElement).disabled, "nothing to import yet").toBe(true);

    await fillIn("import-api-key", "5d1b7c3e-0000-4000-8000-00000000de40");
    await click("import-apply");
    const sent = calls.find((c) => c.cmd === "import_defaults")?.args;
    expect(sent).toEqual({ defaults: { base_url: "https://service.example/webservice_v2", api_key: "5d1b7c3e-0000-4000-8000-00000000de40" } });
    expect((byTest("import-api-key") as HTMLInputElement).value, "the key is not kept on the page").toBe("");
    expect(document.body.innerHTML).not.toContain("5d1b7c3e-0000-4000-8000-00000000de40");
    expect(byTest("import-summary")?.textContent).toContain("2 to add, 0 to update, 2 skipped");

    await pick("import-col-tags", "4");
    expect(calls.find((c) => c.cmd === "import_column")?.args).toEqual({ field: "tags", column: 4 });
    expect((byTest("import-col-tags") as HTMLSelectElement).value).toBe("4");

    await click("import-run");
    const outcomes = [...document.querySelectorAll('[data-test="import-outcome"]')].map((e) => e.textContent);
    expect(outcomes[0]).toBe("Added");
    expect(outcomes[1]).toContain("Wrong password");
    expect(outcomes[2]).toContain("Skipped");
    expect(outcomes[3]).toContain("never sent to another address");
    expect(byTest("import-done")?.textContent).toBe("Import finished: 1 added, 0 updated, 3 not imported.");
    expect(byTest("import-holds-passwords")?.textContent).toContain("/home/user/klanten.csv still holds passwords");
    expect(calls.filter((c) => c.cmd === "profiles").length, "the klanten read again").toBeGreaterThan(1);

    await click("import-close");
    expect(calls.some((c) => c.cmd === "close_import"), "Rust forgets the file").toBe(true);
    expect(byTest("import")).toBeNull();
  });

  /** The search over the list and the dashboard: by name (accents and case aside), by
   * username, by tag; with a tag chosen; Ctrl+K and / go to it; Down moves into the klanten
   * found, Enter opens the first; "Show all" clears it. */
  it("finds a klant by typing and by tag, from the keyboard", async () => {
    const other = (id: string, name: string, username: string, tags: string[]): ProfileView => ({ ...demoProfile, id, name, username, tags, demo: false });
    const profiles = [other("cafe", "Café Brûlé", "brule", ["Jan"]), other("bakker", "Bakker B.V.", "bakker", ["Piet", "Bakkers"]), other("jansen", "Jansen", "jjansen", ["jan"])];
    fakeBackend(calls, { profiles, dashboard: profiles.map((p) => klant(p.id, p.name)) });
    await startUi();
    await settle();
    const listed = () => [...document.querySelectorAll("#profile-list button.profile")].map((b) => b.getAttribute("data-test"));
    const rows = () => [...document.querySelectorAll("tr.klant")].map((r) => r.getAttribute("data-test"));
    expect(byTest("dash-tags")?.textContent, "tags under the name").toBeTruthy();

    document.dispatchEvent(new KeyboardEvent("keydown", { key: "k", ctrlKey: true, bubbles: true }));
    expect(document.activeElement?.id, "Ctrl+K goes to the search").toBe("find");
    await fillIn("find", "CAFE brul");
    expect(listed()).toEqual(["profile-cafe"]);
    expect(rows(), "the dashboard too").toEqual(["dash-cafe"]);
    expect(byTest("dash-narrowed")?.textContent).toContain("1 of 3 klanten shown");
    await fillIn("find", "jjansen");
    expect(listed(), "by username").toEqual(["profile-jansen"]);
    await fillIn("find", "piet");
    expect(listed(), "by tag").toEqual(["profile-bakker"]);
    await fillIn("find", "nobody");
    expect(byTest("found-count")?.textContent).toContain("No klant matches");

    await fillIn("find", "");
    await pick("tag-filter", "Jan");
    expect(listed(), "one tag, case aside").toEqual(["profile-cafe", "profile-jansen"]);
    await click("dash-show-all");
    expect(rows().length).toBe(3);
    expect((byTest("tag-filter") as HTMLSelectElement).value).toBe("");

    (document.activeElement as HTMLElement | null)?.blur();
    document.body.dispatchEvent(new KeyboardEvent("keydown", { key: "/", bubbles: true }));
    expect(document.activeElement?.id, "/ goes to the search").toBe("find");
    await fillIn("find", "jan");
    const find = byTest("find")!;
    find.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
    expect(document.activeElement?.getAttribute("data-test"), "Down: into the klanten found").toBe("profile-cafe");
    document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
    expect(document.activeElement?.getAttribute("data-test")).toBe("profile-jansen");
    document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key: "Home", bubbles: true }));
    document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
    expect(document.activeElement?.id, "up from the first: the search again").toBe("find");
    find.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await settle();
    expect(calls.filter((c) => c.cmd === "sign_in").at(-1)?.args, "Enter opens the first found").toEqual({ profileId: "cafe" });
  });

  /** Edit many at once: a run picked with shift-click, a plan, a rule and a tag for all of
   * them, each klant previewed now and after (and what the rule removes, from Rust); Apply
   * asks first when the rule removes backups, then sends the one change for every klant. */
  it("changes the plan, rule and tags of klanten picked on the dashboard", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false, tags: id === "cafe" ? ["Oud"] : [] });
    const profiles = [other("aarts", "Aarts"), other("bakker", "Bakker B.V."), other("cafe", "Café Brûlé"), other("dekker", "Dekker")];
    fakeBackend(calls, { profiles, dashboard: profiles.map((p) => klant(p.id, p.name)) });
    await startUi();
    await settle();
    await click("pick-bakker");
    const dekker = byTest("pick-dekker")!;
    dekker.dispatchEvent(new MouseEvent("click", { bubbles: true, shiftKey: true }));
    await settle();
    expect(byTest("picked-bar")?.textContent).toContain("3 klanten picked");
    expect((byTest("pick-aarts") as HTMLInputElement).checked, "outside the run").toBe(false);

    await click("many-open");
    await click("many-plan-on");
    await click("many-keep-on");
    await fillIn("many-keep_last", "3");
    await fillIn("many-add-tag", "Jan");
    await pick("many-remove-tag", "Oud");
    await click("many-folder-on");
    await click("many-preview-button");
    const sent = { plan: { schedule: { kind: "daily", at: "02:00" }, paused: false }, retention: { rule: { keep_last: 3 } }, encryption: null, copy_to: null, save_folder: "choose", add_tags: ["Jan"], remove_tags: ["Oud"] };
    expect(calls.find((c) => c.cmd === "preview_many")?.args).toEqual({ ids: ["bakker", "cafe", "dekker"], change: sent });
    const rows = [...document.querySelectorAll('[data-test="many-preview-row"]')].map((r) => r.textContent ?? "");
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain("Plan: Only when I click → Every day, 02:00");
    expect(rows[0]).toContain("removes 2 of its backups");
    expect(rows[1]).toContain("Tags: Oud → Jan");
    expect(rows[2]).toContain("Folder: under the office's folder → the folder chosen when applying");

    await click("many-apply");
    expect(byTest("confirm"), "asked first: the rule removes backups").not.toBeNull();
    await click("confirm-yes");
    expect(calls.find((c) => c.cmd === "edit_many")?.args).toEqual({ ids: ["bakker", "cafe", "dekker"], change: sent });
    expect(byTest("many-done")?.textContent).toBe("3 klanten changed.");
  });

  /** The dashboard's Copies column: made of wanted per klant, marked (with why) when one is
   * missing, a dash without copy targets. */
  it("shows each klant's copies off this computer in a column of its own", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    const saved = Date.UTC(2026, 10, 20, 2, 1);
    fakeBackend(calls, {
      profiles: [other("aarts", "Aarts"), other("bakker", "Bakker"), other("cafe", "Café")],
      dashboard: [
        klant("aarts", "Aarts", { last_success_ms: saved, copies: { made: 2, wanted: 2, last_error: null } }),
        klant("bakker", "Bakker", { last_success_ms: saved, copies: { made: 1, wanted: 2, last_error: "NAS: the folder /mnt/nas is not there" } }),
        klant("cafe", "Café", { last_success_ms: saved }),
      ],
    });
    await startUi();
    await settle();
    const cell = (id: string) => document.querySelector(`[data-test="dash-${id}"] [data-test="dash-copies"] span`);
    expect([cell("aarts")?.textContent, cell("bakker")?.textContent, cell("cafe")?.textContent]).toEqual(["2/2", "1/2", "—"]);
    expect(cell("bakker")?.className).toContain("failed");
    expect(cell("bakker")?.getAttribute("title")).toBe("NAS: the folder /mnt/nas is not there");
    expect(document.querySelector('[data-test="dash-bakker"] [data-test="dash-result"]')?.textContent, "and it needs attention").toContain("Copies 1/2");
  });

  /** Settings opens with its contents: each part's link moves to that part's heading. */
  it("jumps to a part of Settings from its contents", async () => {
    await openSettings(calls);
    const links = [...document.querySelectorAll('[data-test="settings-contents"] a')].map((a) => a.textContent);
    expect(links).toEqual(["Where backups are saved", "Copies off this computer", "Recovery kit", "Backups at once", "Download speed", "Free space", "Running in the background", "Notifications", "E-mail", "Office", "How the service reaches this computer", "Updates"]);
    for (const a of document.querySelectorAll<HTMLAnchorElement>('[data-test="settings-contents"] a')) {
      const id = a.getAttribute("href")!.slice(1);
      expect(document.getElementById(id), `${a.textContent} has its part`).not.toBeNull();
    }
    await click("jump-mail-title");
    expect(document.activeElement?.id, "the part's heading has the focus").toBe("mail-title");
  });

  /** The profile form says where the klant's backups go, and its own folder is picked in
   * Rust's dialog (the page names no path) or given up for the office's. */
  it("gives a klant its own save folder", async () => {
    const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
    fakeBackend(calls, { profiles: [bakker], saveFolder: "/srv/kluis" });
    await startUi();
    await settle();
    await click("edit-profile");
    expect(byTest("klant-folder-state")?.textContent).toBe("In a folder of its own under /srv/kluis (Settings).");
    await click("klant-folder-choose");
    expect(calls.find((c) => c.cmd === "choose_klant_folder")?.args).toEqual({ profileId: "bakker" });
    expect(byTest("klant-folder-state")?.textContent).toBe("In its own folder: /mnt/klanten/bakker");
    await click("klant-folder-clear");
    expect(byTest("klant-folder-state")?.textContent).toContain("under /srv/kluis");
  });

  /** Leaving for a klant closes a previewed import (Rust forgets the file); Export klant
   * list… says where the list went. */
  it("closes a previewed import when a klant is chosen, and exports the klant list", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    fakeBackend(calls, { profiles: [other("bakker", "Bakker B.V."), other("jansen", "Jansen")] });
    await startUi();
    await settle();
    await click("import-klanten");
    expect(byTest("import")).not.toBeNull();
    await click("profile-jansen");
    expect(byTest("import"), "left").toBeNull();
    expect(calls.some((c) => c.cmd === "close_import")).toBe(true);
    await click("overview");
    await click("export-klanten");
    expect(byTest("export-done")?.textContent).toBe("The klant list went to /home/user/kluis-klanten.csv (no passwords or keys in it).");
  });
  beforeEach(() => {
    calls = [];
    localStorage.setItem("kluis.language", "en");
  });
  afterEach(() => clearMocks());

  it("tells the Rust side the window's language at start and when it is chosen, so the tray speaks it too", async () => {
    fakeBackend(calls);
    await startUi();
    await settle();
    const told = () => calls.filter((c) => c.cmd === "set_language").map((c) => c.args);
    expect(told(), "none kept yet: the window's own").toEqual([{ language: "en" }]);
    const menu = document.getElementById("language") as HTMLSelectElement;
    menu.value = "nl";
    menu.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(told().at(-1), "chosen").toEqual({ language: "nl" });
    expect(document.documentElement.lang, "the window speaks it at once").toBe("nl");

    calls = [];
    localStorage.setItem("kluis.language", "en");
    fakeBackend(calls, { language: "en" });
    await startUi();
    await settle();
    expect(told(), "kept already: nothing written").toEqual([]);
  });

  it("offers the demo on first run, opened in a window of its own that touches nothing here", async () => {
    fakeBackend(calls);
    await startUi();
    await settle();
    expect(document.body.textContent).toContain("Welcome to Kluis");
    await click("try-demo");
    await settle();
    const asked = calls.map((c) => c.cmd);
    expect(asked).toContain("open_demo");
    expect(asked, "this Kluis gets no demo klanten").not.toContain("start_demo");
    expect(byTest("demo-badge"), "this window is not the demo").toBeNull();
  });

  it("the demo app starts the demo, clearly labelled, and says where its files are", async () => {
    fakeBackend(calls, { demoApp: true });
    await startUi();
    await settle();
    expect(calls.map((c) => c.cmd)).toContain("start_demo");
    expect(byTest("demo-badge")?.textContent).toContain("Demo");
    expect(byTest("session")?.textContent).toContain("Signed in as demo");
    expect(byTest("try-demo"), "no demo offered inside the demo").toBeNull();
  });

  it("runs a backup through the save dialog to a saved file", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    await click("backup-owner");
    await settle();
    const save = calls.find((c) => c.cmd === "save_backup");
    expect(save?.args, "the webview hands over no path: Rust opens the dialog").toEqual({ jobId: "job-1" });
    expect(calls.some((c) => c.cmd.startsWith("plugin:dialog")), "the webview opens no dialog").toBe(false);
    expect(byTest("backup-saved")?.textContent).toContain("/home/user/chosen.zip");
  });

  it("shows an error's message and a title for its code", async () => {
    fakeBackend(calls, { demoStarted: true });
    mockIPC((cmd) => {
      if (cmd === "launch_info") return { demo: false };
      if (cmd === "settings") return defaultSettings;
      if (cmd === "profiles") return [demoProfile];
      if (cmd === "sign_in") throw { code: "auth_failed", message: "The service refused the api key, username or password." };
      return null;
    });
    await startUi();
    await settle();
    expect(byTest("error")?.textContent).toContain("Sign-in failed");
    expect(byTest("error-message")?.textContent).toContain("refused the api key");
  });

  it("names the certificate a server sent, in the UI's language, outside the technical details", async () => {
    localStorage.setItem("kluis.language", "nl");
    const presented = { subject: "CN=service.example", issuer: "CN=Kantoor Proxy CA", sha256: "AA:BB", top: { subject: "CN=Kantoor Proxy CA", sha256: "CC:DD" } };
    mockIPC((cmd) => {
      if (cmd === "launch_info") return { demo: false };
      if (cmd === "settings") return defaultSettings;
      if (cmd === "profiles") return [demoProfile];
      if (cmd === "sign_in") throw { code: "certificate", message: "The TLS certificate of the service is not trusted.", presented };
      return null;
    });
    await startUi();
    await settle();
    const shown = byTest("presented-certificate");
    expect(shown?.textContent).toContain("De server stuurde een certificaat voor CN=service.example, uitgegeven door CN=Kantoor Proxy CA");
    expect(shown?.textContent).toContain("AA:BB");
    expect(shown?.textContent).toContain("CC:DD");
    expect(shown?.closest("details"), "not hidden behind Details").toBeNull();
  });

  it("speaks Dutch when chosen", async () => {
    localStorage.setItem("kluis.language", "nl");
    fakeBackend(calls);
    await startUi();
    await settle();
    expect(document.body.textContent).toContain("Welkom bij Kluis");
    expect(document.documentElement.lang).toBe("nl");
  });

  it("saves the callback choice and tests the connection", async () => {
    await openSettings(calls);
    await click("cb-webhook_site");
    expect(document.body.textContent).toContain("sees the call's id");
    expect((byTest("cb-test") as HTMLButtonElement).disabled).toBe(true);
    await click("cb-save");
    const saved = calls.find((c) => c.cmd === "set_callback");
    expect(saved?.args).toEqual({ input: { setting: { kind: "webhook_site" }, relay_secret: null } });
    expect(byTest("cb-saved")).not.toBeNull();
    await click("cb-test");
    expect(calls.find((c) => c.cmd === "test_callback")?.args).toEqual({ profileId: "demo" });
    expect(byTest("cb-test-ok")?.textContent).toContain("42 ms");
  });

  it("shows a newer Kluis with what is new, and installs it only through Rust, which may refuse", async () => {
    const update: UpdateView = { current: "0.1.0", state: { kind: "available", version: "0.2.0", notes: "Sneller importeren." }, automatic: false, installs_here: true, managed_by_it: false, unpacked: false };
    await openSettings(calls, { update, updateRefused: "1 backup(s) running: Kluis is updated when they have ended." });
    expect(byTest("update-state")?.textContent).toBe("Kluis 0.2.0 is available (this is 0.1.0).");
    expect(byTest("update-notes")?.textContent, "what is new, as text").toBe("Sneller importeren.");
    await click("update-install");
    expect(calls.some((c) => c.cmd === "install_update")).toBe(true);
    expect(document.body.textContent, "Rust's refusal is shown").toContain("backup(s) running");
    await click("update-automatic");
    expect(calls.find((c) => c.cmd === "set_install_updates")?.args).toEqual({ automatic: true });
    await click("update-look");
    expect(calls.some((c) => c.cmd === "look_for_update")).toBe(true);
  });

  it("leaves installing to the package manager where Rust cannot install (or to IT, or to whoever unpacked the zip), and says when IT turned updates off", async () => {
    const available: UpdateView = { current: "0.1.0", state: { kind: "available", version: "0.2.0", notes: "" }, automatic: false, installs_here: false, managed_by_it: false, unpacked: false };
    await openSettings(calls, { update: available });
    expect(byTest("update-install"), "no install button").toBeNull();
    expect(byTest("update-automatic")).toBeNull();
    expect(document.body.textContent).toContain("sudo apt upgrade");
    await openSettings(calls, { update: { ...available, managed_by_it: true } });
    expect(document.body.textContent, "IT's install for every user").toContain("Your IT installed Kluis for every user");
    expect(document.body.textContent).not.toContain("sudo apt upgrade");
    await openSettings(calls, { update: { ...available, unpacked: true } });
    expect(document.body.textContent, "unpacked from the zip").toContain("unpacked from a zip");
    expect(document.body.textContent).not.toContain("sudo apt upgrade");
    const off: UpdateView = { current: "0.1.0", state: { kind: "off", why: "the file C:\\Kluis\\updates-disabled" }, automatic: false, installs_here: true, managed_by_it: false, unpacked: false };
    await openSettings(calls, { update: off });
    expect(byTest("update-state")?.textContent).toContain("turned off on this computer");
    expect(byTest("update-look"), "nothing to ask").toBeNull();
  });

  it("adds a copy target from Rust's folder dialog by name, tests it and removes it", async () => {
    await openSettings(calls);
    expect(byTest("copies-none")).not.toBeNull();
    expect((byTest("copy-add") as HTMLButtonElement).disabled, "a name comes first").toBe(true);
    await fillIn("copy-name", "NAS");
    await click("copy-add");
    expect(calls.find((c) => c.cmd === "add_copy_folder")?.args).toEqual({ name: "NAS" });
    expect(byTest("copy-target")?.textContent).toContain("/mnt/nas/kluis");
    expect((byTest("copy-name") as HTMLInputElement).value, "ready for the next").toBe("");
    await click("copy-test");
    expect(byTest("copy-test-result")?.textContent).toContain("is not there");
    await click("copy-remove");
    expect(calls.find((c) => c.cmd === "remove_copy_target")?.args).toEqual({ targetId: "t-NAS" });
    expect(byTest("copies-none")).not.toBeNull();
  });

  it("makes the recovery kit in Rust: the page gets where it went and the fingerprint, the dashboard's warning goes", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    fakeBackend(calls, {
      profiles: [other("aarts", "Aarts"), other("bakker", "Bakker")],
      dashboard: [klant("aarts", "Aarts"), klant("bakker", "Bakker")],
      copyTargets: [{ id: "t-nas", name: "NAS", place: { kind: "folder", path: "/mnt/nas" } }],
    });
    await startUi();
    await settle();
    expect(byTest("no-recovery-kit")?.textContent, "copies without a kit are said on the dashboard").toContain("cannot yet be restored");
    await click("kit-open-settings");
    expect(byTest("recovery-state")?.textContent).toContain("No recovery kit yet");
    await click("make-recovery-kit");
    expect(calls.find((c) => c.cmd === "make_recovery_kit")?.args, "the page sends no key and no path").toEqual({ withTargetSecrets: false });
    expect(byTest("recovery-made")?.textContent).toContain("/home/office/kluis-recovery-kit-2026-11-26.txt");
    expect(byTest("recovery-state")?.textContent).toContain("KLUIS-ABCD-EFGH");
    expect(byTest("make-recovery-kit")?.textContent).toBe("Make a new kit…");
    await click("join-recovery-kit");
    expect(calls.find((c) => c.cmd === "join_recovery_kit")?.args, "the key stays in Rust").toEqual({});
    expect(byTest("recovery-made")?.textContent).toContain("now writes its catalogs for the office's kit (KLUIS-OFFICE-KIT)");
    expect(byTest("recovery-state")?.textContent).toContain("KLUIS-OFFICE-KIT");
    await click("overview");
    expect(byTest("dash-aarts"), "back on the dashboard").not.toBeNull();
    expect(byTest("no-recovery-kit"), "which no longer warns").toBeNull();
  });

  it("restores from a copy on a new computer: the key goes to Rust once and stays in no state, a restore shows progress and cancels, Carry on says what is left", async () => {
    fakeBackend(calls, { copyTargets: [{ id: "t-nas", name: "NAS", place: { kind: "folder", path: "/mnt/nas" } }] });
    await startUi();
    await settle();
    await click("restore-from-copy");
    expect(byTest("recover-panel"), "the welcome screen offers it").not.toBeNull();
    await click("recover-find");
    expect(calls.some((c) => c.cmd === "find_copies"), "no key typed: nothing asked").toBe(false);
    expect(byTest("recover-error")?.textContent, "but said").toContain("key first");
    await fillIn("recover-key", "  not a key ");
    await click("recover-find");
    expect(byTest("recover-error")?.textContent).toContain("not a recovery key");
    expect((byTest("recover-key") as HTMLTextAreaElement).value, "a refused key stays to be corrected").toBe("  not a key ");
    await fillIn("recover-key", "AGE-SECRET-KEY-1OTHER");
    await click("recover-find");
    expect(byTest("recover-other-kit")?.textContent, "another kit's key: said, nothing listed").toContain("made for another kit");
    expect(byTest("recover-backups")).toBeNull();
    expect((byTest("recover-key") as HTMLTextAreaElement).value, "kept to be corrected").toBe("AGE-SECRET-KEY-1OTHER");
    const key = "AGE-SECRET-KEY-1QQQ";
    await fillIn("recover-key", key);
    await click("recover-find");
    expect(calls.filter((c) => c.cmd === "find_copies").at(-1)?.args).toEqual({ targetId: "t-nas", pastedKey: key });
    expect((byTest("recover-key") as HTMLTextAreaElement).value, "the field is emptied once Rust holds the key").toBe("");
    expect(JSON.stringify(localStorage) + JSON.stringify(sessionStorage), "nor kept by the webview").not.toContain(key);
    await click("recover-key-file");
    expect(calls.filter((c) => c.cmd === "find_copies").at(-1)?.args, "the kit's file: read by Rust").toEqual({ targetId: "t-nas", pastedKey: null });
    expect(byTest("recover-summary")?.textContent).toContain("Found on \"NAS\": backups 3, klanten 2");
    const rows = [...document.querySelectorAll<HTMLElement>('[data-test="recover-backup"]')];
    expect(rows.map((r) => (r.querySelector('[data-test="recover-restore"]') as HTMLButtonElement).disabled), "gone and recipient-encrypted ones are not offered").toEqual([false, true, true]);
    expect(rows[0].textContent).toContain("encrypted (the kit opens it)");
    expect(rows[2].textContent, "why the kit does not open it").toContain("whoever holds that identity file");

    await click("recover-restore");
    expect(calls.find((c) => c.cmd === "restore_found")?.args.location).toBe("Bakker/owner backup 2026-11-20.zip.age");
    restoreChannel!.onmessage({ stage: "fetching", done: 1024, total: 2048 });
    await settle();
    expect(byTest("recover-restoring")?.textContent).toContain("Fetching and checking the copy");
    for (const busy of ["recover-find", "recover-key-file", "carry-on-button"]) expect((byTest(busy) as HTMLButtonElement).disabled, `${busy} waits for the restore`).toBe(true);
    await click("recover-cancel");
    expect(byTest("recover-restore-error")?.textContent).toContain("Cancelled");
    await click("recover-restore");
    finishRestore!(false);
    await settle();
    expect(byTest("restore-done")?.textContent).toContain("/home/office/Herstel");

    await click("carry-on-button");
    await click("confirm-yes");
    expect(calls.find((c) => c.cmd === "carry_on")?.args, "by its id").toEqual({ computer: "pc-receptie", replaceKit: false });
    expect(byTest("carried-on")?.textContent).toContain("1 klanten of RECEPTIE taken over");
    expect(byTest("carried-left")?.textContent).toContain("password");
    await click("recover-close");
    expect(calls.some((c) => c.cmd === "close_recovery"), "Rust forgets the key").toBe(true);
    expect(byTest("recover-panel")).toBeNull();
    expect(document.body.textContent, "the klant carried on for is here").toContain("Bakker");
  });

  it("adds a bucket: the secret key is sent once, with Add, and forgotten by the page", async () => {
    await openSettings(calls);
    await fillIn("copy-name", "Cloud");
    await click("copy-add-bucket");
    await fillIn("bucket-endpoint", "https://s3.example.nl");
    await fillIn("bucket-region", "nl-ams");
    await fillIn("bucket-name", "office");
    await fillIn("bucket-prefix", "reception");
    await fillIn("bucket-access-key", "AK1");
    await fillIn("bucket-secret-key", "s3cr3t-key");
    await click("bucket-lock");
    await fillIn("bucket-lock-days", "90");
    await click("bucket-add");
    const sent = calls.find((c) => c.cmd === "add_copy_bucket")?.args;
    expect(sent).toEqual({ input: { name: "Cloud", place: { endpoint: "https://s3.example.nl", region: "nl-ams", bucket: "office", prefix: "reception", path_style: false, access_key_id: "AK1", lock: { mode: "governance", days: 90 } }, secret_key: "s3cr3t-key", own_ca: false } });
    expect(byTest("bucket-form"), "closed once added").toBeNull();
    expect(byTest("copy-place")?.textContent).toBe("s3://office/reception (https://s3.example.nl), each copy locked 90 days (governance)");
    expect(document.body.innerHTML, "the key is not on the page").not.toContain("s3cr3t-key");
  });

  it("adds an SFTP server: its host key is shown to compare before it is trusted, the password sent once", async () => {
    await openSettings(calls);
    await fillIn("copy-name", "NAS");
    await click("copy-add-sftp");
    await fillIn("sftp-host", "nas.office.lan");
    await fillIn("sftp-user", "kluis");
    await fillIn("sftp-path", "/volume1/kluis");
    await fillIn("sftp-secret", "nas-p4ssword");
    expect(byTest("sftp-trust"), "nothing to trust before the server is met").toBeNull();
    await click("sftp-connect");
    expect(calls.find((c) => c.cmd === "sftp_host_key")?.args, "the server is met without the password").toEqual({ server: { host: "nas.office.lan", port: 22 } });
    expect(byTest("sftp-fingerprint")?.textContent).toBe("SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8");
    await fillIn("sftp-host", "nas2.office.lan");
    expect(byTest("sftp-shown"), "another server is met anew").toBeNull();
    await fillIn("sftp-host", "nas.office.lan");
    await click("sftp-connect");
    await click("sftp-trust");
    const sent = calls.find((c) => c.cmd === "add_copy_sftp")?.args;
    const place = { host: "nas.office.lan", port: 22, user: "kluis", path: "/volume1/kluis", login: { method: "password" }, host_key: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8" };
    expect(sent).toEqual({ input: { name: "NAS", place, secret: "nas-p4ssword" } });
    expect(byTest("sftp-form"), "closed once added").toBeNull();
    expect(byTest("copy-place")?.textContent).toBe("sftp://kluis@nas.office.lan/volume1/kluis (SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8)");
    expect(document.body.innerHTML, "the password is not on the page").not.toContain("nas-p4ssword");
  });

  it("adds an SFTP server with a key file: the page names no file, Rust's dialog picks it", async () => {
    await openSettings(calls);
    await fillIn("copy-name", "NAS");
    await click("copy-add-sftp");
    await fillIn("sftp-host", "nas.office.lan");
    await fillIn("sftp-port", "2222");
    await fillIn("sftp-user", "kluis");
    await fillIn("sftp-path", "kluis");
    await pick("sftp-login", "key");
    await click("sftp-connect");
    await click("sftp-trust");
    const sent = calls.find((c) => c.cmd === "add_copy_sftp")?.args as { input: SftpInput };
    expect(sent.input.place.login).toEqual({ method: "key", key_file: "" });
    expect(sent.input.place.port).toBe(2222);
    expect(sent.input.secret, "no passphrase typed").toBe("");
  });

  it("sets a copy target's own rule, and back to keeping every copy", async () => {
    const place = { kind: "folder" as const, path: "/mnt/nas" };
    await openSettings(calls, { copyTargets: [{ id: "t-nas", name: "NAS", place }] });
    expect(byTest("copy-keep")?.textContent).toBe("Every backup is kept.");
    await click("copy-rule");
    await fillIn("copy-keep-keep_monthly", "84");
    await click("copy-rule-save");
    expect(calls.filter((c) => c.cmd === "set_copy_target_rule").at(-1)?.args).toEqual({ targetId: "t-nas", rule: { keep_monthly: 84 } });
    expect(byTest("copy-rule-form"), "closed once saved").toBeNull();
    expect(byTest("copy-keep")?.textContent).toBe("Rule: 84 monthly.");
    await click("copy-rule");
    expect((byTest("copy-keep-keep_monthly") as HTMLInputElement).value, "the saved rule").toBe("84");
    await fillIn("copy-keep-keep_monthly", "");
    await click("copy-rule-save");
    expect(calls.filter((c) => c.cmd === "set_copy_target_rule").at(-1)?.args).toEqual({ targetId: "t-nas", rule: null });
  });

  it("shows a bucket target by its bucket, prefix, server and lock, never a secret", async () => {
    const place = { kind: "s3" as const, endpoint: "https://s3.example.nl", region: "nl-ams", bucket: "office", prefix: "reception", path_style: false, access_key_id: "AK1", lock: { mode: "compliance" as const, days: 30 } };
    await openSettings(calls, { copyTargets: [{ id: "t-s3", name: "Cloud", place }] });
    expect(byTest("copy-place")?.textContent).toBe("s3://office/reception (https://s3.example.nl), each copy locked 30 days (compliance)");
  });

  it("names no tunnel program itself: cloudflared is picked in Rust's dialog", async () => {
    await openSettings(calls);
    await click("cb-tunnel");
    expect(byTest("cb-program")?.tagName, "shown, not typed").toBe("CODE");
    expect(byTest("cb-program")?.textContent).toBe("cloudflared");
    await click("cb-choose-program");
    expect(calls.find((c) => c.cmd === "choose_tunnel_program")?.args).toEqual({});
    expect(byTest("cb-program")?.textContent).toBe("/opt/cloudflare/cloudflared");
  });

  it("sends a typed relay secret once and keeps it out of the page", async () => {
    await openSettings(calls);
    await click("cb-relay");
    await type(byTest("cb-relay-url") as HTMLInputElement, "https://relay.example");
    await type(byTest("cb-relay-secret") as HTMLInputElement, "relay-secret-value");
    await click("cb-save");
    const saved = calls.find((c) => c.cmd === "set_callback");
    expect(saved?.args).toEqual({ input: { setting: { kind: "relay", url: "https://relay.example" }, relay_secret: "relay-secret-value" } });
    expect(document.body.innerHTML).not.toContain("relay-secret-value");
  });

  it("shows a backup resumed at start and saves it when staged", async () => {
    fakeBackend(calls, {
      demoStarted: true,
      resumed: [
        { job_id: "old-job", event: { kind: "stage", stage: "downloading" } },
        { job_id: "old-job", event: { kind: "staged", file_name: "owner-backup.zip", bytes: 100, sha256: "f".repeat(64) } },
      ],
    });
    await startUi();
    await settle();
    await settle();
    expect(byTest("resumed-job")?.textContent).toContain("Demo");
    await click("resumed-save");
    expect(calls.find((c) => c.cmd === "save_backup")?.args).toEqual({ jobId: "old-job" });
    expect(byTest("resumed-job")?.textContent).toContain("/home/user/chosen.zip");
    // Saved: the card says so, and stays (with where it went) until closed.
    expect(document.getElementById("resumed-title")?.textContent).toBe("Backups started earlier: finished");
    await click("resumed-close");
    expect(byTest("resumed-job"), "closed").toBeNull();
    expect(document.getElementById("resumed-title"), "the whole card closed").toBeNull();
  });

  /** The dashboard (the first screen of many klanten) shows a resumed backup while it runs, and
   * no longer once it has ended: its result is then in the klant's row and history. */
  it("takes a resumed backup off the dashboard once it has ended", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    fakeBackend(calls, {
      demoStarted: true,
      profiles: [demoProfile, other("bakker", "Bakker B.V.")],
      dashboard: [klant("demo", "Demo"), klant("bakker", "Bakker B.V.")],
      resumed: [
        { job_id: "old-job", event: { kind: "stage", stage: "downloading" } },
        { job_id: "old-job", event: { kind: "staged", file_name: "owner-backup.zip", bytes: 100, sha256: "f".repeat(64) } },
      ],
    });
    await startUi();
    await settle();
    await settle();
    expect(byTest("dashboard"), "many klanten: the dashboard first").not.toBeNull();
    expect(byTest("resumed-job")?.textContent, "shown while it waits to be saved").toContain("Demo");
    await click("resumed-save");
    expect(calls.find((c) => c.cmd === "save_backup")?.args).toEqual({ jobId: "old-job" });
    expect(byTest("resumed-job"), "ended: off the dashboard").toBeNull();
    await click("profile-demo");
    await click("tab-backup");
    expect(byTest("resumed-job")?.textContent, "still on the Backup tab, with where it went").toContain("/home/user/chosen.zip");
  });

  /** Sends the held backup's events as Rust would: accepted, then a download in progress. */
  function emit(...events: AppJobEvent[]): void {
    for (const e of events) heldBackup!.onmessage(e);
  }
  const progress = (bytes: number): AppJobEvent => ({ kind: "progress", bytes, total: 1000, bytes_per_sec: 1048576 });
  /** The demo's window with a backup that has begun to download (its events sent by the test). */
  async function downloading(options: { dialogClosed?: boolean } = {}): Promise<void> {
    fakeBackend(calls, { demoStarted: true, holdBackup: true, ...options });
    await startUi();
    await settle();
    await click("backup-owner");
    emit({ kind: "stage", stage: "accepted" }, { kind: "stage", stage: "downloading" });
  }

  it("keeps the profile form's text, caret and focus while a backup downloads", async () => {
    await downloading();
    await click("add-profile");
    const name = document.getElementById("f-name") as HTMLInputElement;
    name.focus();
    await type(name, "Bakker B.V.");
    name.setSelectionRange(6, 6);
    for (let i = 1; i <= 5; i++) {
      emit(progress(i * 100));
      await settle();
    }
    expect(document.getElementById("f-name"), "the same input, not a new one").toBe(name);
    expect(name.value).toBe("Bakker B.V.");
    expect([name.selectionStart, name.selectionEnd], "the caret stays").toEqual([6, 6]);
    expect(document.activeElement, "the focus stays").toBe(name);
    await type(name, ",");
    expect(name.value).toBe("Bakker, B.V.");
    await type(document.getElementById("f-base-url") as HTMLInputElement, "https://service.example/webservice_v2");
    await type(document.getElementById("f-api-key") as HTMLInputElement, "key");
    await type(document.getElementById("f-username") as HTMLInputElement, "bakker");
    await type(document.getElementById("f-password") as HTMLInputElement, "pw");
    await type(document.getElementById("f-tags") as HTMLInputElement, "Jan, Bakkers ,");
    await click("save-profile");
    expect(calls.find((c) => c.cmd === "save_profile")?.args).toMatchObject({ input: { name: "Bakker, B.V.", tags: ["Jan", "Bakkers"] } });
  });

  it("joins the office from Settings, shows the office key it made once, and leaves", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    await click("tab-settings");
    await fillIn("office-hub", "https://hub.office.test");
    await fillIn("office-pc", "RECEPTIE");
    await fillIn("office-pc-key", "klr_pc_secret");
    await click("office-join");
    expect(calls.find((c) => c.cmd === "join_office")?.args).toEqual({ input: { code: null, hub: "https://hub.office.test", pc: "RECEPTIE", pc_key: "klr_pc_secret", office_key: null, own_ca: false } });
    expect(byTest("office-made-key")?.textContent).toContain("kluis-office-key-abab");
    expect(byTest("office-joined")?.textContent).toContain("RECEPTIE");
    expect((byTest("office-pc-key") as HTMLInputElement | null), "the form, and the key typed, are gone").toBe(null);
    await click("office-made-key-done");
    expect(byTest("office-made-key"), "shown once").toBe(null);
    await fillIn("office-invite-name", "BALIE");
    await click("office-invite-make");
    expect(calls.find((c) => c.cmd === "invite_office_pc")?.args).toEqual({ pc: "BALIE" });
    expect(byTest("office-invite")?.textContent).toContain("KLUIS-JOIN-");
    await click("office-invite-done");
    expect(byTest("office-invite"), "shown once").toBe(null);
    await click("office-leave");
    await click("confirm-yes");
    expect(calls.some((c) => c.cmd === "leave_office")).toBe(true);
    expect(byTest("office-form")).not.toBe(null);
    await fillIn("office-code", "KLUIS-JOIN-abc");
    await click("office-join-code");
    expect(calls.filter((c) => c.cmd === "join_office").pop()?.args).toMatchObject({ input: { code: "KLUIS-JOIN-abc" } });
  });

  it("shows every klant of the office on the dashboard, a silent PC and a klant planned twice flagged", async () => {
    const now = Date.now();
    const officeView: OfficeView = {
      pcs: [
        { name: "BALIE", heard_ms_ago: 60_000, silent: false, revoked: false, unreadable: null, klanten: 1 },
        { name: "LAPTOP JAN", heard_ms_ago: 50 * 3_600_000, silent: true, revoked: false, unreadable: null, klanten: 1 },
      ],
      klanten: [
        { klant: "a".repeat(64), names: ["Visser", "Visser B.V."], service: "https://api.example.nl", username: "visser", on: [{ pc: "BALIE", plan: "daily at 02:00", last_backup_ms: now - 3_600_000, backed_up_elsewhere: null, overdue: false, last_error: null }, { pc: "LAPTOP JAN", plan: "daily at 02:00", last_backup_ms: null, backed_up_elsewhere: null, overdue: true, last_error: null }], last_backup: [now - 3_600_000, "BALIE"], flags: [{ flag: "planned_twice", pcs: ["BALIE", "LAPTOP JAN"] }, { flag: "on_silent_pc", pc: "LAPTOP JAN" }] },
      ],
    };
    const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
    fakeBackend(calls, { demoStarted: true, office: { hub: "https://hub.office.test", pc: "BALIE", joined_ms: 0 }, officeView, profiles: [demoProfile, bakker], dashboard: [klant("demo", "Demo"), klant("bakker", "Bakker B.V.")] });
    await startUi();
    await settle();
    await click("office-show");
    expect(byTest("office-summary")?.textContent).toContain("1 of 1 klanten of the office needs attention");
    const pcs = [...document.querySelectorAll('[data-test="office-pc"]')].map((p) => p.textContent ?? "");
    expect(pcs[1]).toContain("SILENT");
    expect(pcs[0], "one klant, said as one").toMatch(/looks after 1 klant$/);
    const flags = [...document.querySelectorAll('[data-test="office-flag"]')].map((f) => f.textContent);
    expect(flags).toEqual(["planned on BALIE, LAPTOP JAN (one plan is enough)", "only on LAPTOP JAN, not heard of for over a day (its last state shown)"]);
    expect(byTest("office-klant")?.textContent).toContain("Visser / Visser B.V.");
  });

  it("reaches the dashboard's Office from a PC in an office with one klant of its own", async () => {
    const officeView: OfficeView = { pcs: [{ name: "BALIE", heard_ms_ago: 60_000, silent: false, revoked: false, unreadable: null, klanten: 1 }], klanten: [{ klant: "b".repeat(64), names: ["Bakker B.V."], service: "https://api.example.nl", username: "bakker", on: [{ pc: "BALIE", plan: "daily at 02:00", last_backup_ms: Date.now() - 3_600_000, backed_up_elsewhere: null, overdue: false, last_error: null }], last_backup: [Date.now() - 3_600_000, "BALIE"], flags: [] }] };
    const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
    fakeBackend(calls, { office: { hub: "https://hub.office.test", pc: "BALIE", joined_ms: 0 }, officeView, profiles: [bakker], dashboard: [klant("bakker", "Bakker B.V.")] });
    await startUi();
    await settle();
    expect(byTest("office-view"), "one klant: its own page first").toBe(null);
    await click("overview");
    await click("office-show");
    expect(byTest("office-summary")?.textContent).toContain("Every klant of the office is backed up as planned (1)");
  });

  it("keeps the callback settings' text, caret and focus while a backup downloads", async () => {
    await downloading();
    await click("tab-settings");
    await click("cb-relay");
    const url = byTest("cb-relay-url") as HTMLInputElement;
    url.focus();
    await type(url, "https://relay.example");
    for (let i = 1; i <= 5; i++) {
      emit(progress(i * 100));
      await settle();
    }
    await click("tab-backup");
    await click("tab-settings");
    const again = byTest("cb-relay-url") as HTMLInputElement;
    expect(again.value, "the draft survives leaving the tab").toBe("https://relay.example");
    again.focus();
    again.setSelectionRange(8, 8);
    emit(progress(900), { kind: "saved", path: "/home/user/b.zip", bytes: 1000, sha256: "f".repeat(64) });
    await settle();
    expect(byTest("cb-relay-url")).toBe(again);
    expect([again.selectionStart, document.activeElement]).toEqual([8, again]);
  });

  it("announces each stage once in the live region, not every second", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "Date"] });
    try {
      fakeBackend(calls, { demoStarted: true, holdBackup: true });
      await startUi();
      await settle();
      await click("backup-owner");
      emit({ kind: "stage", stage: "accepted" });
      await settle();
      const live = byTest("announce")!;
      expect(live.getAttribute("aria-live")).toBe("polite");
      expect(live.textContent).toBe("Demo: The service is making the backup.");
      const said: string[] = [];
      new MutationObserver(() => said.push(live.textContent ?? "")).observe(live, { subtree: true, childList: true, characterData: true });
      vi.advanceTimersByTime(3000);
      await settle();
      expect(byTest("stage-waiting")?.textContent, "the elapsed time moves").toContain("0:03");
      expect(said, "but nothing new is announced").toEqual([]);
      expect(byTest("stage-waiting")?.closest("[aria-live]"), "the ticking text is outside any live region").toBeNull();
      emit({ kind: "stage", stage: "downloading" }, progress(100));
      await settle();
      emit(progress(500));
      await settle();
      emit(progress(900));
      await settle();
      expect(said, "one announcement for the new stage, none for progress").toEqual(["Demo: Downloading the backup."]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("moves the focus to the next step after each action, never to the page", async () => {
    await downloading();
    expect(document.activeElement, "Backup owner, now disabled, hands the focus to Cancel").toBe(byTest("cancel-backup"));
    await click("cancel-backup");
    expect(document.activeElement, "Cancel, now gone, hands it back to Backup owner").toBe(byTest("backup-owner"));
    await click("add-profile");
    expect(document.activeElement, "a form opens on its first field").toBe(document.getElementById("f-name"));
  });

  it("asks again what the key allows as soon as the service accepted the backup", async () => {
    fakeBackend(calls, { demoStarted: true, holdBackup: true });
    await startUi();
    await settle();
    await click("backup-owner");
    const asked = () => calls.filter((c) => c.cmd === "permissions").length;
    const before = asked();
    emit({ kind: "stage", stage: "accepted" });
    await settle();
    expect(asked(), "re-read at the accepted stage, not only at the end").toBe(before + 1);
  });

  it("moves between tabs with the arrows, Home and End", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    const press = async (key: string) => {
      document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true }));
      await settle();
    };
    byTest("tab-backup")!.focus();
    await press("End");
    expect(document.activeElement).toBe(byTest("tab-settings"));
    expect(byTest("tab-settings")?.getAttribute("aria-selected")).toBe("true");
    await press("Home");
    expect(document.activeElement).toBe(byTest("tab-backup"));
    await press("ArrowLeft");
    expect(document.activeElement, "wraps around").toBe(byTest("tab-settings"));
  });

  it("shows a cancelled backup as cancelled, without a size, hash or path", async () => {
    const row: HistoryEntry = {
      id: "h1", profile: "demo", transport: "loopback", started_at_ms: 0, finished_at_ms: 1000, stage: "failed",
      bytes: 100, sha256: "f".repeat(64), path: "/staging/owner-backup.zip", failed_stage: "saved", error_code: "cancelled", error_message: "The backup was cancelled; nothing was saved.", removed: null, last_check: null, encrypted: null,
    };
    fakeBackend(calls, { demoStarted: true, history: [row] });
    await startUi();
    await settle();
    await click("tab-history");
    const shown = byTest("history-row")!;
    expect(shown.getAttribute("data-stage")).toBe("cancelled");
    expect(shown.textContent).toContain("Cancelled");
    expect(shown.textContent).not.toContain("Failed");
    expect(shown.textContent).not.toContain("/staging/owner-backup.zip");
    expect(shown.textContent).not.toContain("ffffffffffff");
  });

  it("flags a klant whose restore test failed, with what did not restore, and one whose test is late", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    fakeBackend(calls, {
      demoStarted: true,
      profiles: [demoProfile, other("bakker", "Bakker B.V."), other("jansen", "Jansen")],
      dashboard: [
        klant("demo", "Demo", { last_success_ms: Date.UTC(2026, 10, 20, 2, 1) }),
        klant("bakker", "Bakker B.V.", { last_success_ms: Date.UTC(2026, 10, 20, 2, 1), restore_test_failed: "2025/a.csv: invalid checksum" }),
        klant("jansen", "Jansen", { last_success_ms: Date.UTC(2026, 10, 20, 2, 1), restore_test_overdue: true }),
      ],
    });
    await startUi();
    await settle();
    const result = (id: string) => byTest(`dash-${id}`)?.querySelector('[data-test="dash-result"]')?.textContent ?? "";
    expect(result("bakker")).toContain("Restore test failed");
    expect(result("bakker")).toContain("2025/a.csv: invalid checksum");
    expect(result("jansen")).toContain("Restore test due");
    expect(byTest("dash-bakker")?.classList.contains("attention")).toBe(true);
    expect(byTest("dash-jansen")?.classList.contains("attention")).toBe(true);
    expect(byTest("dash-demo")?.classList.contains("attention")).toBe(false);
  });

  it("says a klant another PC of the office backed up as saved, by that PC and when, without asking for attention", async () => {
    const other = (id: string, name: string): ProfileView => ({ ...demoProfile, id, name, demo: false });
    const at = Date.UTC(2026, 10, 20, 2, 4);
    fakeBackend(calls, {
      demoStarted: true,
      profiles: [demoProfile, other("visser", "Visser")],
      dashboard: [klant("demo", "Demo"), klant("visser", "Visser", { office_backup: { at_ms: at, by: "RECEPTIE" } })],
    });
    await startUi();
    await settle();
    const row = byTest("dash-visser");
    expect(row?.querySelector('[data-test="dash-result"]')?.textContent).toContain("Saved by RECEPTIE");
    expect(row?.querySelector('[data-test="dash-reason"]')?.textContent).toContain("another PC of the office");
    expect(row?.querySelector('[data-test="dash-age"]')?.textContent).not.toContain("never");
    expect(row?.classList.contains("attention")).toBe(false);
  });

  it("shows a saved backup's contents as a searchable tree, restores one file through Rust's dialog and tests a restore", async () => {
    const saved = { id: "h2", profile: "demo", transport: "loopback", started_at_ms: 0, finished_at_ms: 1000, stage: "saved", failed_stage: null, error_code: null, error_message: null, path: "/home/u/b.zip", bytes: 2148, sha256: "ab".repeat(32), removed: null, last_check: null, encrypted: null } as HistoryEntry;
    fakeBackend(calls, { demoStarted: true, history: [saved] });
    await startUi();
    await settle();
    await click("tab-history");
    await click("history-contents");
    expect(calls.find((c) => c.cmd === "backup_contents")?.args).toEqual({ historyId: "h2", copy: null });
    const rows = () => [...document.querySelectorAll('[data-test="content"]')];
    expect(rows().map((r) => r.querySelector("span")?.textContent)).toEqual(["2025/", "grootboek.csv", "memoriaal.csv", "../evil.txt"]);
    expect(byTest("content-refused")?.textContent, "a hostile entry is said, with no button").toContain("climbs out");
    await fillIn("contents-search", "GROOT");
    expect(rows().length, "the hit and the folder above it").toBe(2);
    expect(byTest("contents-count")?.textContent).toBe("2 of 4 entries");
    (rows()[1].querySelector('[data-test="content-restore"]') as HTMLButtonElement).click();
    await settle();
    expect(calls.find((c) => c.cmd === "restore_backup")?.args).toMatchObject({ historyId: "h2", copy: null, only: ["2025/grootboek.csv"] });
    expect(byTest("restore-done")?.textContent).toContain("Restored 1 file (2.0 KB) into /home/u/Teruggezet");
    // The copy on the NAS is read instead (as after a lost disk), and restored from.
    const from = byTest("contents-from") as HTMLSelectElement;
    expect([...from.options].map((o) => o.textContent)).toEqual(["This computer", "The copy on NAS"]);
    from.value = "t-nas";
    from.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(calls.filter((c) => c.cmd === "backup_contents").at(-1)?.args).toEqual({ historyId: "h2", copy: "t-nas" });
    await click("contents-restore-all");
    expect(calls.filter((c) => c.cmd === "restore_backup").at(-1)?.args).toMatchObject({ historyId: "h2", copy: "t-nas", only: [] });
    const partial = byTest("restore-done");
    expect(partial?.textContent, "a partial restore is never said as whole").toContain("Restored 3 of 4 entries");
    expect(partial?.getAttribute("role")).toBe("alert");
    expect(byTest("restore-left-out")?.textContent).toContain("../evil.txt: its name climbs out");
    await click("history-test-restore");
    expect(calls.find((c) => c.cmd === "test_restore")?.args).toEqual({ historyId: "h2" });
    expect(byTest("restore-test")?.textContent).toContain("FAILED");
    expect(byTest("restore-test")?.textContent).toContain("memoriaal.csv");
    expect(byTest("restore-test")?.textContent).toContain("Copy on NAS: The restore test passed");
    await click("contents-close");
    expect(byTest("contents")).toBeNull();
  });

  it("forgets a profile only from its form, and only after asking", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    expect(byTest("forget-profile"), "not beside the everyday buttons").toBeNull();
    await click("edit-profile");
    byTest("forget-profile")!.focus(); // as a click or Enter on it does
    await click("forget-profile");
    expect(byTest("confirm")?.textContent).toContain("Remove this profile and its api key and password");
    expect(document.activeElement, "the safe answer has the focus").toBe(byTest("confirm-no"));
    await click("confirm-no");
    expect(calls.some((c) => c.cmd === "forget_profile"), "declined: nothing removed").toBe(false);
    expect(byTest("confirm")).toBeNull();
    expect(document.activeElement, "the focus is back where it was").toBe(byTest("forget-profile"));
    await click("forget-profile");
    byTest("confirm")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    await settle();
    expect(calls.some((c) => c.cmd === "forget_profile"), "Escape declines").toBe(false);
    await click("forget-profile");
    await click("confirm-yes");
    expect(calls.find((c) => c.cmd === "forget_profile")?.args).toEqual({ profileId: "demo" });
  });

  it("asks before a downloaded backup is discarded", async () => {
    await downloading({ dialogClosed: true });
    emit({ kind: "staged", file_name: "owner-backup.zip", bytes: 1000, sha256: "f".repeat(64) });
    await settle();
    expect(calls.filter((c) => c.cmd === "save_backup"), "the save dialog opened and was closed").toHaveLength(1);
    const discard = [...document.querySelectorAll("button")].find((b) => b.textContent === "Discard")!;
    discard.click();
    await settle();
    expect(byTest("confirm")?.textContent).toContain("Discard the downloaded backup?");
    await click("confirm-no");
    expect(calls.some((c) => c.cmd === "cancel_backup"), "declined: the file stays").toBe(false);
    expect(byTest("choose-where"), "still offered").not.toBeNull();
    discard.click();
    await settle();
    await click("confirm-yes");
    expect(calls.find((c) => c.cmd === "cancel_backup")?.args).toEqual({ jobId: "job-1" });
  });

  it("shows and hides a typed secret on request", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    await click("add-profile");
    const key = document.getElementById("f-api-key") as HTMLInputElement;
    await type(key, "secret-key");
    expect(key.type).toBe("password");
    await click("f-api-key-show");
    const shown = document.getElementById("f-api-key") as HTMLInputElement;
    expect([shown.type, shown.value]).toEqual(["text", "secret-key"]);
    expect(byTest("f-api-key-show")?.getAttribute("aria-pressed")).toBe("true");
    await click("f-api-key-show");
    expect((document.getElementById("f-api-key") as HTMLInputElement).type).toBe("password");
  });

  it("formats numbers the Dutch way in Dutch", async () => {
    localStorage.setItem("kluis.language", "nl");
    await downloading();
    emit({ kind: "progress", bytes: 500, total: 1000, bytes_per_sec: 256 * 1024 * 1024 });
    await settle();
    expect(byTest("stage-downloading")?.textContent).toContain("256,0 MB/s");
  });

  it("warns a real profile that “This computer only” cannot work, and leads to Settings", async () => {
    const own: ProfileView = { ...demoProfile, id: "own", name: "Bakker B.V.", demo: false };
    fakeBackend(calls, { profiles: [own] });
    await startUi();
    await settle();
    expect(byTest("loopback-warning")?.textContent).toContain("works only with the demo");
    const open = [...byTest("loopback-warning")!.querySelectorAll("button")][0];
    open.click();
    await settle();
    expect(byTest("tab-settings")?.getAttribute("aria-selected")).toBe("true");
  });

  it("does not warn the demo about “This computer only”", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    expect(byTest("backup-owner")).not.toBeNull();
    expect(byTest("loopback-warning")).toBeNull();
  });

  it("trusts a certificate chosen in Rust's dialog and shows its subject and fingerprint", async () => {
    const own: ProfileView = { ...demoProfile, id: "own", name: "Bakker B.V.", demo: false };
    fakeBackend(calls, { profiles: [own] });
    await startUi();
    await settle();
    await click("edit-profile");
    expect(byTest("trusted-none")).not.toBeNull();
    await click("choose-ca");
    expect(calls.find((c) => c.cmd === "choose_profile_ca")?.args, "no path from the webview").toEqual({ profileId: "own" });
    expect(byTest("trusted-cas")?.textContent).toContain("CN=Office Proxy CA");
    expect(byTest("trusted-cas")?.textContent).toContain("AB:CD");
  });

  describe("two klanten", () => {
    const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
    const jansen: ProfileView = { ...demoProfile, id: "jansen", name: "Jansen & Zn", demo: false };

    it("shows nothing of one klant under the other: environment, errors, the running backup", async () => {
      fakeBackend(calls, { profiles: [bakker, jansen], refuseSignIn: ["jansen"], holdBackup: true });
      await startUi();
      await settle();
      await click("profile-bakker");
      await click("tab-environment");
      expect(byTest("environment")?.textContent).toContain("Administratie van bakker");
      await click("tab-backup");
      await click("backup-owner");
      emit({ kind: "stage", stage: "accepted" });
      await settle();
      expect(byTest("stage-waiting"), "Bakker's backup waits").not.toBeNull();

      await click("profile-jansen");
      expect(byTest("error")?.textContent, "the error names its klant").toContain("Jansen & Zn: Sign-in failed");
      expect(byTest("backup-title")?.textContent).toContain("Jansen & Zn");
      expect(byTest("stage-waiting"), "Bakker's backup is not shown under Jansen").toBeNull();
      expect(byTest("cancel-backup")).toBeNull();
      expect(byTest("running-bakker"), "the running backup is marked at its own klant").not.toBeNull();
      expect(byTest("running-jansen")).toBeNull();
      await click("tab-environment");
      expect(byTest("environment"), "Bakker's environment is not shown under Jansen").toBeNull();
      expect(byTest("environment-signed-out")?.textContent).toContain("Jansen & Zn");
      expect(document.body.textContent).not.toContain("Administratie van bakker");

      await click("profile-bakker");
      expect(byTest("error"), "Jansen's error does not follow to Bakker").toBeNull();
      expect(byTest("environment")?.textContent).toContain("Administratie van bakker");
      await click("tab-backup");
      expect(byTest("stage-waiting")).not.toBeNull();
    });

    it("pauses every plan at once through the tray's action, says so on the dashboard, and resumes", async () => {
      fakeBackend(calls, { profiles: [bakker, jansen] });
      await startUi();
      await settle();
      expect(byTest("plans-paused"), "nothing said while plans run").toBeNull();
      await click("profile-bakker");
      await click("tab-settings");
      await click("pause-plans");
      expect(calls.filter((c) => c.cmd === "tray_action").map((c) => c.args)).toEqual([{ action: "pause_plans" }]);
      expect(byTest("plans-paused-note")?.textContent).toContain("Plans are paused");
      expect(byTest("pause-plans")?.textContent).toBe("Resume plans");
      await click("overview");
      expect(byTest("plans-paused")?.textContent).toContain("no klant is backed up by its plan");
      await click("resume-plans");
      expect(calls.filter((c) => c.cmd === "tray_action").map((c) => c.args)).toEqual([{ action: "pause_plans" }, { action: "resume_plans" }]);
      expect(byTest("plans-paused"), "gone once resumed").toBeNull();
    });

    it("reads the settings again when the window gets the focus (the tray may have paused the plans)", async () => {
      fakeBackend(calls, { profiles: [bakker, jansen] });
      await startUi();
      await settle();
      const before = calls.filter((c) => c.cmd === "settings").length;
      window.dispatchEvent(new Event("focus"));
      await settle();
      expect(calls.filter((c) => c.cmd === "settings").length).toBeGreaterThan(before);
    });

    it("opens on the dashboard, signed in to nobody, and a klant's name opens that klant", async () => {
      const hour = 3_600_000;
      const now = Date.now();
      const days = [...Array(27).fill("free"), "saved", "missed", "failed"];
      fakeBackend(calls, {
        profiles: [bakker, jansen],
        dashboard: [
          klant("bakker", "Bakker B.V.", { last_success_ms: now - 3 * hour, last_success_bytes: 5 * 1048576, next_due_ms: now + 20 * hour }),
          klant("jansen", "Jansen & Zn", { last_success_ms: now - 50 * hour, overdue: true, days, last_error: { at_ms: now - hour, code: "permission_denied", message: "The api key may not make backups." } }),
        ],
      });
      await startUi();
      await settle();
      expect(byTest("dashboard"), "the first screen with more than one klant").not.toBeNull();
      expect(calls.some((c) => c.cmd === "sign_in"), "nobody is signed in for the dashboard").toBe(false);
      expect(byTest("overview")?.getAttribute("aria-current")).toBe("page");
      const rows = () => [...document.querySelectorAll<HTMLElement>("table.dash tbody tr.klant")].map((r) => r.dataset.test);
      expect(rows(), "needs attention first").toEqual(["dash-jansen", "dash-bakker"]);
      const jansenRow = byTest("dash-jansen")!;
      expect(jansenRow.querySelector('[data-test="dash-age"]')?.textContent).toBe("2 days agooverdue");
      expect(jansenRow.querySelector(".age.overdue"), "overdue is marked").not.toBeNull();
      expect(jansenRow.querySelector('[data-test="dash-result"]')?.textContent).toContain("Not allowed");
      expect(jansenRow.querySelector('[data-test="dash-reason"]')?.textContent).toContain("The api key may not make backups.");
      expect(jansenRow.querySelector('[data-test="dash-reason"]')?.getAttribute("title"), "when, in its tooltip").toMatch(/\d.* — The api key may not make backups\.$/);
      expect(jansenRow.querySelector(".strip")?.getAttribute("aria-label")).toBe("Last 30 days: 1 saved, 1 failed, 1 missed");
      expect(byTest("dash-bakker")!.querySelector('[data-test="dash-age"]')?.textContent).toBe("3 hours ago");
      expect(byTest("dash-bakker")!.textContent).toContain("5.0 MB");

      await click("sort-klant");
      expect(rows(), "by name").toEqual(["dash-bakker", "dash-jansen"]);
      expect(document.querySelector('th[aria-sort="ascending"]')?.textContent).toContain("Klant");
      await click("sort-klant");
      expect(rows(), "by name, the other way").toEqual(["dash-jansen", "dash-bakker"]);
      await click("sort-age");
      expect(rows(), "the oldest backup first").toEqual(["dash-jansen", "dash-bakker"]);
      await click("sort-size");
      expect(rows(), "a klant without a size last").toEqual(["dash-bakker", "dash-jansen"]);
      await click("attention-only");
      expect(rows(), "only those that need attention").toEqual(["dash-jansen"]);

      (jansenRow.querySelector("th button") as HTMLElement).click();
      await settle();
      expect(byTest("dashboard")).toBeNull();
      expect(calls.filter((c) => c.cmd === "sign_in").map((c) => c.args)).toEqual([{ profileId: "jansen" }]);
      expect(byTest("session")?.textContent).toContain("Jansen & Zn");
      await click("overview");
      expect(byTest("dashboard")).not.toBeNull();
      expect(byTest("session")?.textContent, "no one klant's session over the dashboard").not.toContain("Jansen");
    });

    /** 200 rows took the webview longer to lay out than the window may take to answer: only
     * those in view are drawn, and a screen reader still hears how many there are. */
    it("draws only the klanten in view of a long dashboard, and the others as the page scrolls to them", async () => {
      const many = Array.from({ length: 150 }, (_, i) => ({ ...demoProfile, id: `k${String(i).padStart(3, "0")}`, name: `Klant ${String(i).padStart(3, "0")}`, demo: false }));
      fakeBackend(calls, { profiles: many, dashboard: many.map((p) => klant(p.id, p.name)) });
      await startUi();
      await settle();
      const table = document.querySelector("table.dash")!;
      const drawn = () => [...table.querySelectorAll<HTMLElement>("tbody tr.klant")];
      expect(table.getAttribute("aria-rowcount"), "every klant and the header row").toBe("151");
      expect(drawn().length, "before it is measured: the first FIRST_ROWS").toBe(FIRST_ROWS);
      expect(drawn()[0].getAttribute("aria-rowindex")).toBe("2");

      // Laid out: rows of 50 px, the page scrolled 3000 px into the table (rows 60 to `below` in view).
      const below = Math.ceil((window.innerHeight + 3000) / 50);
      const rowHeight = vi.spyOn(HTMLElement.prototype, "offsetHeight", "get").mockImplementation(function (this: HTMLElement) {
        return this.matches("tr.klant") ? 50 : 0;
      });
      const bodyTop = vi.spyOn(HTMLElement.prototype, "getBoundingClientRect").mockReturnValue({ top: -3000 } as DOMRect);
      try {
        window.dispatchEvent(new Event("scroll"));
        await settle();
        await settle();
        const shown = drawn().map((r) => r.dataset.test);
        expect(shown[0], "from OVERSCAN rows above the view").toBe(`dash-k${String(60 - OVERSCAN).padStart(3, "0")}`);
        expect(shown.length, "to OVERSCAN rows below it").toBe(below - 60 + 2 * OVERSCAN);
        expect(drawn()[0].getAttribute("aria-rowindex"), "its place in the whole table").toBe(String(60 - OVERSCAN + 2));
        const [top, bottom] = [...table.querySelectorAll<HTMLElement>("tbody tr.spacer")];
        expect(top.style.height, "the rows above stood in for").toBe(`${(60 - OVERSCAN) * 50}px`);
        expect(bottom.style.height, "and those below").toBe(`${(150 - below - OVERSCAN) * 50}px`);
        expect(top.getAttribute("aria-hidden")).toBe("true");
      } finally {
        rowHeight.mockRestore();
        bodyTop.mockRestore();
      }
    });

    it("says so when no klant needs attention, in Dutch too", async () => {
      fakeBackend(calls, { profiles: [bakker, jansen] });
      localStorage.setItem("kluis.language", "nl");
      await startUi();
      await settle();
      await click("attention-only");
      expect(byTest("dash-all-well")?.textContent).toContain("Geen klant vraagt aandacht");
      await click("attention-only");
      expect(byTest("dash-bakker")?.textContent).toContain("nooit");
    });

    it("reads the dashboard again when a backup ends while it is shown", async () => {
      fakeBackend(calls, { profiles: [bakker, jansen] });
      await startUi();
      await settle();
      const before = calls.filter((c) => c.cmd === "dashboard").length;
      plannedChannel?.onmessage({ job_id: "p-1", profile_id: "bakker", event: { kind: "saved", path: "/b/Bakker.zip", bytes: 1, sha256: "f".repeat(64) } });
      await settle();
      expect(calls.filter((c) => c.cmd === "dashboard").length).toBe(before + 1);

      // With a klant open the dashboard is not read at each backup's end, but when shown.
      await click("profile-bakker");
      plannedChannel?.onmessage({ job_id: "p-2", profile_id: "jansen", event: { kind: "saved", path: "/j/Jansen.zip", bytes: 1, sha256: "f".repeat(64) } });
      await settle();
      expect(calls.filter((c) => c.cmd === "dashboard").length, "not read while unseen").toBe(before + 1);
      await click("overview");
      expect(calls.filter((c) => c.cmd === "dashboard").length, "read when shown").toBe(before + 2);
    });

    it("signs in to the klant selected after one is forgotten", async () => {
      fakeBackend(calls, { profiles: [jansen, bakker] });
      await startUi();
      await settle();
      await click("profile-bakker");
      await click("edit-profile");
      await click("forget-profile");
      await click("confirm-yes");
      const after = calls.slice(calls.findIndex((c) => c.cmd === "forget_profile"));
      expect(after.find((c) => c.cmd === "sign_in")?.args, "the next klant is loaded, not left signed out").toEqual({ profileId: "jansen" });
      expect(byTest("session")?.textContent).toContain("Signed in as demo (Jansen & Zn)");
    });

    it("clears another klant's error when a profile form opens", async () => {
      fakeBackend(calls, { profiles: [jansen, bakker], refuseSignIn: ["jansen"] });
      await startUi();
      await settle();
      await click("profile-jansen");
      expect(byTest("error")?.textContent).toContain("Jansen & Zn");
      await click("add-profile");
      expect(byTest("error"), "no stale banner over a new profile's form").toBeNull();
    });
  });

  it("says when the service stops answering while the backup waits, and when it is back", async () => {
    fakeBackend(calls, { demoStarted: true, holdBackup: true });
    await startUi();
    await settle();
    await click("backup-owner");
    emit({ kind: "stage", stage: "accepted" }, { kind: "service", answering: false });
    await settle();
    expect(byTest("service-silent")?.textContent).toContain("has not answered since");
    expect(byTest("session")?.textContent).toContain("service not answering");
    emit({ kind: "service", answering: true });
    await settle();
    expect(byTest("service-silent")).toBeNull();
    expect(byTest("session")?.textContent).not.toContain("service not answering");
    expect(byTest("stage-waiting")).not.toBeNull();
  });

  it("says within seconds that a download stalled, and stops saying it when bytes come again", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval"] });
    try {
      await downloading();
      emit(progress(100));
      await settle();
      vi.advanceTimersByTime(9_000);
      await settle();
      expect(byTest("stage-stalled"), "not after 9 s").toBeNull();
      vi.advanceTimersByTime(2_000);
      await settle();
      expect(byTest("stage-stalled")?.textContent).toContain("No data from the file host for 11 s");
      emit(progress(200));
      await settle();
      expect(byTest("stage-stalled")).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it("gives a failed backup's reason in Dutch in the history, the system's words behind Details", async () => {
    localStorage.setItem("kluis.language", "nl");
    const failed: HistoryEntry = {
      id: "h1", profile: "demo", started_at_ms: 0, finished_at_ms: 1000, stage: "failed", failed_stage: "downloading",
      error_code: "file_host_unreachable", error_message: "Could not reach the file host that serves the backup.", path: null, bytes: null, sha256: null,
    } as HistoryEntry;
    fakeBackend(calls, { demoStarted: true, history: [failed] });
    await startUi();
    await settle();
    await click("tab-history");
    const reason = byTest("history-reason")!;
    expect(reason.firstChild?.textContent).toBe(languages.nl.errFileHostUnreachable);
    expect(reason.querySelector("details")?.textContent).toContain("Could not reach the file host");
  });

  it("gives the browser's validation tips in Dutch", async () => {
    localStorage.setItem("kluis.language", "nl");
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    await click("add-profile");
    const form = document.querySelector("form")!;
    await type(document.getElementById("f-base-url") as HTMLInputElement, "geen adres");
    form.reportValidity();
    expect((document.getElementById("f-name") as HTMLInputElement).validationMessage).toBe("Vul dit veld in.");
    expect((document.getElementById("f-base-url") as HTMLInputElement).validationMessage).toContain("https://");
  });

  it("shows no English on any screen of the Dutch UI (Rust's own words only behind Details)", async () => {
    localStorage.setItem("kluis.language", "nl");
    const failed = { id: "h1", profile: "demo", started_at_ms: 0, finished_at_ms: 1000, stage: "failed", failed_stage: "accepted", error_code: "callback_timeout", error_message: "The service did not report the backup as finished in time.", path: null, bytes: null, sha256: null } as HistoryEntry;
    const saved = { id: "h2", profile: "demo", started_at_ms: 0, finished_at_ms: 1000, stage: "saved", failed_stage: null, error_code: null, error_message: null, path: "/home/u/b.zip", bytes: 100, sha256: "ab".repeat(32) } as HistoryEntry;
    const seen: string[] = [];
    const look = (screen: string) => seen.push(...visibleText(document.body).map((text) => `${screen}: ${text}`));
    fakeBackend(calls);
    await startUi();
    await settle();
    look("welcome");
    clearMocks();
    fakeBackend(calls, { demoStarted: true, holdBackup: true, history: [failed, saved] });
    await startUi();
    await settle();
    look("backup");
    await click("backup-owner");
    emit({ kind: "stage", stage: "accepted" }, { kind: "service", answering: false });
    await settle();
    look("waiting");
    emit({ kind: "stage", stage: "downloading" }, progress(10));
    await settle();
    look("downloading");
    emit({ kind: "failed", code: "network", message: "Could not reach the service." });
    await settle();
    look("failed");
    for (const tab of ["tab-history", "tab-environment", "tab-settings"]) {
      await click(tab);
      look(tab);
    }
    for (const kind of ["cb-relay", "cb-direct", "cb-tunnel", "cb-webhook_site"]) {
      await click(kind);
      look(kind);
    }
    await click("edit-profile");
    look("profile form");
    await click("forget-profile");
    look("confirm");
    const english = seen.filter((line) => englishWords.test(line.slice(line.indexOf(": ") + 2)));
    expect(english, "English in the Dutch UI").toEqual([]);
    expect(seen.length, "the screens were looked at").toBeGreaterThan(50);
  });

  describe("plans", () => {
    /** Picks `value` in select `id` as a person does. */
    async function choose(id: string, value: string): Promise<void> {
      const select = document.getElementById(id) as HTMLSelectElement;
      select.value = value;
      select.dispatchEvent(new Event("change", { bubbles: true }));
      await settle();
    }

    it("sets a plan in the profile form and shows when the next backup runs", async () => {
      fakeBackend(calls, { demoStarted: true, saveFolder: "/home/user/Backups" });
      await startUi();
      await settle();
      expect(byTest("next-backup")?.textContent).toContain("No plan");
      await click("edit-profile");
      await choose("plan-kind", "weekly");
      await choose("plan-day", "wednesday");
      const at = document.getElementById("plan-at") as HTMLInputElement;
      at.value = "03:15";
      at.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("plan-save");
      expect(calls.find((c) => c.cmd === "set_plan")?.args).toEqual({ profileId: "demo", input: { schedule: { kind: "weekly", day: "wednesday", at: "03:15" }, paused: false } });
      expect(byTest("plan")?.querySelector('[data-test="next-backup"]')?.textContent).toContain("Next planned backup: 24 Nov 2026");
      await click("save-profile");
      expect(byTest("next-backup")?.textContent, "the Backup panel says it too").toContain("Next planned backup");
    });

    it("sets a klant's monitor, sends a test, and never shows its URL again", async () => {
      fakeBackend(calls, { demoStarted: true, saveFolder: "/home/user/Backups", monitorDown: false });
      await startUi();
      await settle();
      await click("edit-profile");
      expect(byTest("monitor-state")?.textContent).toBe("No monitor.");
      expect(byTest("monitor-test"), "nothing to test yet").toBeNull();
      const url = document.getElementById("monitor-url") as HTMLInputElement;
      url.value = "https://hc-ping.com/0f0e";
      url.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("monitor-save");
      expect(calls.find((c) => c.cmd === "set_monitor")?.args).toEqual({ profileId: "demo", pingUrl: "https://hc-ping.com/0f0e" });
      expect(byTest("monitor-state")?.textContent).toContain("A monitor is set");
      expect((document.getElementById("monitor-url") as HTMLInputElement).value, "the field is emptied").toBe("");
      expect(document.body.innerHTML).not.toContain("0f0e");
      await click("monitor-test");
      expect(byTest("monitor-test-ok")?.textContent).toContain("answered the test ping");
      await click("monitor-remove");
      expect(calls.filter((c) => c.cmd === "set_monitor").at(-1)?.args).toEqual({ profileId: "demo", pingUrl: null });
      expect(byTest("monitor-state")?.textContent).toBe("No monitor.");
    });

    it("shows what a retention rule would remove before it is saved, and saves it only when confirmed", async () => {
      const old: HistoryEntry = {
        id: "h1", profile: "demo", transport: "loopback", started_at_ms: Date.UTC(2026, 10, 1, 2, 0), finished_at_ms: Date.UTC(2026, 10, 1, 2, 1), stage: "saved",
        bytes: 2048, sha256: "ab".repeat(32), path: "/home/user/Backups/Demo/Demo 2026-11-01 0200.zip", failed_stage: null, error_code: null, error_message: null, removed: null, last_check: null, encrypted: null,
      };
      fakeBackend(calls, { demoStarted: true, saveFolder: "/home/user/Backups", wouldRemove: [old] });
      await startUi();
      await settle();
      await click("edit-profile");
      expect(byTest("keep-state")?.textContent).toBe("Every backup is kept.");
      const last = document.getElementById("keep-keep_last") as HTMLInputElement;
      last.value = "2";
      last.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("keep-save");
      expect(calls.find((c) => c.cmd === "preview_retention")?.args).toEqual({ profileId: "demo", rule: { keep_last: 2 } });
      expect(calls.some((c) => c.cmd === "set_retention"), "not saved before the preview is confirmed").toBe(false);
      expect(byTest("keep-would-remove")?.textContent).toContain("Backups this rule would remove now (1)");
      expect(byTest("keep-would-remove-item")?.textContent).toContain("Demo 2026-11-01 0200.zip");
      await click("keep-cancel");
      expect(byTest("keep-would-remove"), "cancelled: the preview goes").toBeNull();
      expect(calls.some((c) => c.cmd === "set_retention")).toBe(false);
      await click("keep-save");
      await click("keep-confirm");
      expect(calls.find((c) => c.cmd === "set_retention")?.args).toEqual({ profileId: "demo", rule: { keep_last: 2 } });
      expect(byTest("keep-state")?.textContent).toBe("Rule: the newest 2.");
    });

    it("copies a klant's backups to the targets ticked, and to every one when all are", async () => {
      const place = { kind: "folder" as const, path: "/mnt/x" };
      fakeBackend(calls, { demoStarted: true, saveFolder: "/home/user/Backups", copyTargets: [{ id: "t-nas", name: "NAS", place }, { id: "t-usb", name: "USB", place }] });
      await startUi();
      await settle();
      await click("edit-profile");
      const usb = () => byTest("copy-to-USB") as HTMLInputElement;
      expect(usb().checked, "every target, unless the klant chose").toBe(true);
      await click("copy-to-USB");
      expect(calls.filter((c) => c.cmd === "set_copy_to").at(-1)?.args).toEqual({ profileId: "demo", targetIds: ["t-nas"] });
      expect(usb().checked).toBe(false);
      await click("copy-to-USB");
      expect(calls.filter((c) => c.cmd === "set_copy_to").at(-1)?.args, "all ticked: every one").toEqual({ profileId: "demo", targetIds: null });
    });

    it("saves a rule that removes nothing now without asking, and an empty rule as none; turns monthly verification on", async () => {
      fakeBackend(calls, { demoStarted: true, saveFolder: "/home/user/Backups" });
      await startUi();
      await settle();
      await click("edit-profile");
      const monthly = document.getElementById("keep-keep_monthly") as HTMLInputElement;
      monthly.value = "12";
      monthly.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("keep-save");
      expect(calls.filter((c) => c.cmd === "set_retention").at(-1)?.args).toEqual({ profileId: "demo", rule: { keep_monthly: 12 } });
      expect(byTest("keep-state")?.textContent).toBe("Rule: 12 monthly.");
      await click("verify-monthly");
      expect(calls.find((c) => c.cmd === "set_verify_monthly")?.args).toEqual({ profileId: "demo", on: true });
      expect((byTest("verify-monthly") as HTMLInputElement).checked).toBe(true);
      expect((byTest("restore-test-monthly") as HTMLInputElement).checked).toBe(true);
      await click("restore-test-monthly");
      expect(calls.find((c) => c.cmd === "set_restore_test_monthly")?.args).toEqual({ profileId: "demo", on: false });
      expect((byTest("restore-test-monthly") as HTMLInputElement).checked).toBe(false);
      monthly.value = "";
      monthly.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("keep-save");
      expect(calls.filter((c) => c.cmd === "preview_retention"), "nothing to preview for no rule").toHaveLength(1);
      expect(calls.filter((c) => c.cmd === "set_retention").at(-1)?.args).toEqual({ profileId: "demo", rule: null });
    });

    it("encrypts a klant's backups with a passphrase that is sent once and never shown, or to a recipient", async () => {
      fakeBackend(calls, { demoStarted: true, saveFolder: "/home/user/Backups" });
      await startUi();
      await settle();
      await click("edit-profile");
      expect(byTest("encryption-state")?.textContent).toBe("Backups are saved unencrypted.");
      const kind = byTest("encrypt-kind") as HTMLSelectElement;
      kind.value = "passphrase";
      kind.dispatchEvent(new Event("change", { bubbles: true }));
      await settle();
      const phrase = byTest("encrypt-passphrase") as HTMLInputElement;
      expect(phrase.type).toBe("password");
      phrase.value = "een lange geheime zin";
      phrase.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("encrypt-save");
      expect(calls.find((c) => c.cmd === "set_encryption")?.args).toEqual({ profileId: "demo", input: { kind: "passphrase", passphrase: "een lange geheime zin" } });
      expect(byTest("encryption-state")?.textContent).toBe("Backups are encrypted with the passphrase in the keyring.");
      expect((byTest("encrypt-passphrase") as HTMLInputElement).value, "the passphrase is forgotten once sent").toBe("");
      expect(document.body.innerHTML).not.toContain("een lange geheime zin");
      const again = byTest("encrypt-kind") as HTMLSelectElement;
      again.value = "recipient";
      again.dispatchEvent(new Event("change", { bubbles: true }));
      await settle();
      const recipient = byTest("encrypt-recipient") as HTMLInputElement;
      recipient.value = " age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq ";
      recipient.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("encrypt-save");
      expect(calls.filter((c) => c.cmd === "set_encryption").at(-1)?.args).toEqual({ profileId: "demo", input: { kind: "recipient", recipient: "age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq" } });
      expect(byTest("encryption-state")?.textContent).toContain("encrypted to age1qyqs");
    });

    it("Verify backups lists each damaged backup, and the dashboard and history show them", async () => {
      const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
      const damaged: HistoryEntry = {
        id: "h2", profile: "bakker", transport: "relay", started_at_ms: Date.UTC(2026, 10, 20, 2, 0), finished_at_ms: Date.UTC(2026, 10, 20, 2, 1), stage: "saved",
        bytes: 4096, sha256: "cd".repeat(32), path: "/home/user/Backups/Bakker/Bakker 2026-11-20 0200.zip", failed_stage: null, error_code: null, error_message: null, removed: null,
        last_check: { at_ms: Date.UTC(2026, 10, 24, 9, 0), finding: "changed", detail: "It is 100 bytes; the backup saved was 4096 bytes." }, encrypted: null,
      };
      const removed: HistoryEntry = { ...damaged, id: "h3", last_check: null, removed: { at_ms: Date.UTC(2026, 10, 21, 2, 2), rule: "keep the last 2" } };
      fakeBackend(calls, {
        profiles: [demoProfile, bakker],
        saveFolder: "/home/user/Backups",
        verifyReport: {
          verified: 7,
          bytes: 28672,
          problems: [damaged],
          copies_checked: 3,
          copy_problems: [{ profile: "bakker", target: "NAS", location: "/mnt/nas/Bakker/Bakker 2026-11-19 0200.zip", check: { at_ms: Date.UTC(2026, 10, 24, 9, 0), finding: "missing", detail: null } }],
        },
        dashboard: [klant("demo", "Demo"), klant("bakker", "Bakker B.V.", { last_success_ms: Date.UTC(2026, 10, 20, 2, 1), damaged: 1 })],
        history: [damaged, removed],
      });
      await startUi();
      await settle();
      expect(byTest("dash-bakker")?.querySelector('[data-test="dash-result"]')?.textContent).toContain("Damaged backups: 1");
      expect(byTest("dash-bakker")?.classList.contains("attention"), "a damaged backup needs attention").toBe(true);
      await click("dash-verify");
      expect(calls.some((c) => c.cmd === "verify_backups")).toBe(true);
      const problems = byTest("verify-problems")?.textContent ?? "";
      expect(problems).toContain("1 of 7 backups cannot be relied on");
      expect(problems).toContain("Bakker B.V.");
      expect(problems).toContain("changed");
      expect(problems).toContain("Bakker 2026-11-20 0200.zip");
      expect(byTest("verify-copies")?.textContent).toContain("3, of which 1 missing");
      expect(byTest("verify-copy-problem")?.textContent).toContain("copy on NAS");
      expect(byTest("verify-copy-problem")?.textContent).toContain("/mnt/nas/Bakker/Bakker 2026-11-19 0200.zip");
      (byTest("dash-bakker")?.querySelector("button.link") as HTMLButtonElement).click();
      await settle();
      await click("tab-history");
      expect(byTest("history-check")?.textContent).toContain("changed");
      expect(byTest("history-removed")?.textContent).toContain("keep the last 2");
    });

    it("Export report sends the period, format and klant shown (never a path) and says where the report went", async () => {
      const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
      fakeBackend(calls, { profiles: [demoProfile, bakker], saveFolder: "/home/user/Backups", dashboard: [klant("demo", "Demo"), klant("bakker", "Bakker B.V.")] });
      await startUi();
      await settle();
      (byTest("dash-bakker")?.querySelector("button.link") as HTMLButtonElement).click();
      await settle();
      await click("tab-history");
      const filter = document.getElementById("history-filter") as HTMLSelectElement;
      filter.value = "bakker";
      filter.dispatchEvent(new Event("change", { bubbles: true }));
      await settle();
      const field = (id: string, value: string) => {
        const input = document.getElementById(id) as HTMLInputElement | HTMLSelectElement;
        input.value = value;
        input.dispatchEvent(new Event(input instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
      };
      field("report-from", "2026-11-01");
      field("report-to", "2026-11-30");
      field("report-format", "printable");
      await settle();
      await click("report-export");
      expect(calls.filter((c) => c.cmd === "export_report").at(-1)?.args).toEqual({ request: { from: "2026-11-01", to: "2026-11-30", format: "printable", profile: "bakker" } });
      expect(byTest("report-done")?.textContent).toBe("Report of 3 backups saved to /home/user/Downloads/kluis-report-2026-11-01-2026-11-30.html.");
      field("report-to", "2026-10-01");
      await settle();
      expect(byTest("report-done"), "a changed period clears the old result").toBeNull();
      await click("report-export");
      expect(byTest("report-error")?.textContent).toContain("ends before it begins");
    });

    it("Export report, its dialog cancelled, says nothing", async () => {
      fakeBackend(calls, { profiles: [demoProfile], dialogClosed: true });
      await startUi();
      await settle();
      await click("tab-history");
      await click("report-export");
      const request = calls.find((c) => c.cmd === "export_report")?.args.request as ReportRequest;
      expect(request.format, "CSV unless another is chosen").toBe("csv");
      expect(request.from < request.to, "a period of days before today").toBe(true);
      expect(byTest("report-done")).toBeNull();
      expect(byTest("report-error")).toBeNull();
    });

    it("Cancel all asks first, then stops every backup and empties the queue", async () => {
      const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
      fakeBackend(calls, { profiles: [demoProfile, bakker], saveFolder: "/home/user/Backups" });
      await startUi();
      await settle();
      expect(byTest("cancel-all"), "nothing to cancel yet").toBeNull();
      await click("backup-all");
      await click("cancel-all");
      expect(byTest("confirm")?.textContent).toContain("Stop every backup now?");
      await click("confirm-no");
      expect(calls.some((c) => c.cmd === "cancel_all"), "declined: nothing cancelled").toBe(false);
      await click("cancel-all");
      await click("confirm-yes");
      expect(calls.filter((c) => c.cmd === "cancel_all")).toHaveLength(1);
      await settle();
      expect(byTest("queued-bakker"), "the queue is empty").toBeNull();
      expect(byTest("cancel-all")).toBeNull();
    });

    it("sets how many backups run at once", async () => {
      await openSettings(calls);
      const select = byTest("at-once") as HTMLSelectElement;
      expect(select.value).toBe("2");
      select.value = "3";
      select.dispatchEvent(new Event("change", { bubbles: true }));
      await settle();
      expect(calls.find((c) => c.cmd === "set_unattended_at_once")?.args).toEqual({ n: 3 });
      expect((byTest("at-once") as HTMLSelectElement).value).toBe("3");
    });

    it("limits the download speed, in office hours only when asked, and lifts the limit again", async () => {
      await openSettings(calls);
      expect(byTest("speed-state")?.textContent).toBe("Downloads are not limited.");
      const mb = byTest("speed-mb") as HTMLInputElement;
      mb.value = "2,5";
      mb.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("speed-office-hours");
      await click("speed-save");
      expect(calls.find((c) => c.cmd === "set_bandwidth")?.args).toEqual({ limit: { mb_per_sec: 2.5, office_hours: { from: "08:00", to: "18:00" } } });
      expect(byTest("speed-state")?.textContent).toBe("Downloads are limited to 2.5 MB/s together on weekdays from 08:00 to 18:00.");
      expect((byTest("speed-save") as HTMLButtonElement).disabled, "saved: nothing to save").toBe(true);
      const again = byTest("speed-mb") as HTMLInputElement;
      again.value = "";
      again.dispatchEvent(new Event("input", { bubbles: true }));
      await settle();
      await click("speed-save");
      expect(calls.filter((c) => c.cmd === "set_bandwidth").at(-1)?.args).toEqual({ limit: null });
      expect(byTest("speed-state")?.textContent).toBe("Downloads are not limited.");
    });

    it("sets the free space a backup's disk must have, refuses what is not whole MiB, and goes back to the default", async () => {
      await openSettings(calls);
      expect(byTest("room-state")?.textContent).toBe("A backup is asked for only with at least 100 MiB free (the default).");
      const type = async (text: string) => {
        const input = byTest("room-mib") as HTMLInputElement;
        input.value = text;
        input.dispatchEvent(new Event("input", { bubbles: true }));
        await settle();
      };
      await type("2,5");
      expect((byTest("room-save") as HTMLButtonElement).disabled, "not whole MiB").toBe(true);
      await type("2048");
      await click("room-save");
      expect(calls.find((c) => c.cmd === "set_min_free")?.args).toEqual({ mib: 2048 });
      expect(byTest("room-state")?.textContent).toBe("A backup is asked for only with at least 2048 MiB free.");
      expect((byTest("room-mib") as HTMLInputElement).value).toBe("2048");
      await type("");
      await click("room-save");
      expect(calls.filter((c) => c.cmd === "set_min_free").at(-1)?.args).toEqual({ mib: null });
      expect(byTest("room-state")?.textContent).toContain("(the default)");
    });

    it("turns desktop notifications off and on, and sends a test that says whether it showed", async () => {
      await openSettings(calls);
      const box = byTest("notify-desktop") as HTMLInputElement;
      expect(box.checked, "on unless turned off").toBe(true);
      await click("notify-desktop");
      expect(calls.find((c) => c.cmd === "set_notify_desktop")?.args).toEqual({ on: false });
      expect((byTest("notify-desktop") as HTMLInputElement).checked).toBe(false);
      await click("notify-test");
      expect(byTest("notify-test-result")?.textContent).toContain("A test notification was sent");
    });

    it("turns start at login on, and leaves the box off and disabled where the OS cannot tell", async () => {
      await openSettings(calls);
      expect((byTest("start-at-login") as HTMLInputElement).checked, "off unless turned on").toBe(false);
      await click("start-at-login");
      expect(calls.find((c) => c.cmd === "set_start_at_login")?.args).toEqual({ on: true });
      expect((byTest("start-at-login") as HTMLInputElement).checked).toBe(true);

      await openSettings(calls, { loginStart: "refused" });
      expect((byTest("start-at-login") as HTMLInputElement).disabled).toBe(true);
    });

    it("names backups nobody watches by the office's template, previewed as typed; a refused one says why", async () => {
      await openSettings(calls);
      const field = () => byTest("file-name-template") as HTMLInputElement;
      expect(field().value).toBe("{klant} {date} {time}");
      expect(byTest("file-name-preview")?.textContent).toMatch(/^For example: Bakker B\.V\. \d{4}-\d\d-\d\d \d{4}\.zip$/);
      expect((byTest("file-name-save") as HTMLButtonElement).disabled, "nothing to save yet").toBe(true);
      const type = async (text: string) => {
        field().value = text;
        field().dispatchEvent(new Event("input", { bubbles: true }));
        await settle();
      };
      await type("{klant} backup");
      expect(byTest("file-name-preview")?.textContent).toBe("For example: Bakker B.V. backup.zip");
      await click("file-name-save");
      expect(byTest("error")?.textContent).toContain("needs {date}");
      expect(field().value, "the typed text stays to be mended").toBe("{klant} backup");
      await type("{date} {klant}");
      await click("file-name-save");
      expect(calls.filter((c) => c.cmd === "set_file_name_template").map((c) => c.args)).toEqual([{ template: "{klant} backup" }, { template: "{date} {klant}" }]);
      expect(field().value).toBe("{date} {klant}");
      expect((byTest("file-name-save") as HTMLButtonElement).disabled).toBe(true);
    });

    it("sets up e-mail: the password is sent once and never shown, a refusal says why, Send test says whether it went", async () => {
      await openSettings(calls);
      expect((byTest("mail-test") as HTMLButtonElement).disabled, "nothing saved to test").toBe(true);
      await fillIn("mail-server", "smtp.office.test");
      await fillIn("mail-username", "kluis");
      await fillIn("mail-password", "mail-secret");
      await fillIn("mail-from", "kluis at office");
      await fillIn("mail-to", "beheer@office.test, ict@office.test");
      await click("mail-daily");
      await fillIn("mail-at", "07:30");
      await click("mail-save");
      expect(byTest("error")?.textContent).toContain("is not an e-mail address");
      expect((byTest("mail-from") as HTMLInputElement).value, "the typed text stays to be mended").toBe("kluis at office");
      await fillIn("mail-from", "kluis@office.test");
      await click("mail-save");
      expect(calls.filter((c) => c.cmd === "set_mail").at(-1)?.args).toEqual({
        input: {
          settings: { server: "smtp.office.test", port: 587, username: "kluis", password_saved: false, from: "kluis@office.test", to: ["beheer@office.test, ict@office.test"], when: { kind: "daily", at: "07:30" } },
          password: "mail-secret",
        },
      });
      const password = byTest("mail-password") as HTMLInputElement;
      expect(password.value, "the password is not kept in the page").toBe("");
      expect(password.placeholder).toBe("Unchanged (kept in the keyring)");
      expect((byTest("mail-to") as HTMLInputElement).value).toBe("beheer@office.test, ict@office.test");
      await click("mail-test");
      expect(byTest("mail-test-result")?.textContent).toBe("A test e-mail was sent: check the recipients' inbox.");
      await click("mail-remove");
      expect((byTest("mail-server") as HTMLInputElement).value).toBe("");
    });

    it("says when the saved e-mail settings cannot be read, starts all the same, and saving anew mends it", async () => {
      await openSettings(calls, { mailUnreadable: true });
      expect(byTest("mail-problem")?.textContent).toContain("cannot be read");
      expect((byTest("mail-server") as HTMLInputElement).value, "an empty form to set them anew").toBe("");
      await fillIn("mail-server", "smtp.office.test");
      await fillIn("mail-from", "kluis@office.test");
      await fillIn("mail-to", "beheer@office.test");
      await click("mail-save");
      expect(byTest("mail-problem"), "said no more once saved").toBeNull();
    });

    it("says why a test e-mail could not be sent", async () => {
      await openSettings(calls, { monitorDown: true });
      await click("mail-daily");
      await fillIn("mail-server", "smtp.office.test");
      await fillIn("mail-from", "kluis@office.test");
      await fillIn("mail-to", "beheer@office.test");
      await click("mail-save");
      await click("mail-test");
      expect(byTest("mail-test-result")?.textContent).toBe("The e-mail could not be sent: The e-mail could not be sent through smtp.office.test:587 (connection refused).");
    });

    it("says why a test notification could not be shown", async () => {
      await openSettings(calls, { monitorDown: true });
      await click("notify-test");
      expect(byTest("notify-test-result")?.textContent).toContain("The notification could not be shown: The desktop notification could not be shown (no session bus).");
    });

    it("says why a test ping did not arrive", async () => {
      fakeBackend(calls, { demoStarted: true, profiles: [{ ...demoProfile, monitor: true }], monitorDown: true });
      await startUi();
      await settle();
      await click("edit-profile");
      await click("monitor-test");
      expect(byTest("monitor-test-failed")?.textContent).toContain("could not be pinged");
    });

    it("asks for a save folder before a plan can run, and leads to Settings", async () => {
      fakeBackend(calls, { demoStarted: true });
      await startUi();
      await settle();
      await click("edit-profile");
      await choose("plan-kind", "daily");
      expect(byTest("plan-needs-folder")?.textContent).toContain("cannot ask where to save");
      expect((byTest("plan-save") as HTMLButtonElement).disabled).toBe(true);
      byTest("plan-paused")!.click(); // a paused plan needs no folder yet
      await settle();
      expect(byTest("plan-needs-folder")).toBeNull();
    });

    it("Backup all queues every klant, each leaving the queue as its backup starts", async () => {
      const bakker: ProfileView = { ...demoProfile, id: "bakker", name: "Bakker B.V.", demo: false };
      fakeBackend(calls, { profiles: [demoProfile, bakker], saveFolder: "/home/user/Backups" });
      await startUi();
      await settle();
      expect(document.querySelectorAll('[data-test="backup-all"]').length, "one Backup all, not two").toBe(1);
      expect(document.querySelector('.sidebar [data-test="backup-all"]'), "on the dashboard, not in the list").toBeNull();
      await click("backup-all");
      expect(calls.some((c) => c.cmd === "backup_all")).toBe(true);
      expect([byTest("queued-demo"), byTest("queued-bakker")].every(Boolean), "both wait their turn").toBe(true);
      expect((byTest("backup-all") as HTMLButtonElement).disabled, "not twice at once").toBe(true);
      plannedChannel!.onmessage({ job_id: "all-1", profile_id: "bakker", event: { kind: "stage", stage: "requested" } });
      await settle();
      expect(byTest("queued-bakker")).toBeNull();
      expect(byTest("running-bakker")).not.toBeNull();
      expect(byTest("queued-demo")).not.toBeNull();
      finishBackupAll!();
      await settle();
      expect(byTest("queued-demo")).toBeNull();
      expect((byTest("backup-all") as HTMLButtonElement).disabled).toBe(false);
    });

    it("says a klant waits to try again after a passing failure, with the reason and the time, and Cancel stops it", async () => {
      fakeBackend(calls, { demoStarted: true });
      await startUi();
      await settle();
      plannedChannel!.onmessage({ job_id: "planned-2", profile_id: "demo", event: { kind: "stage", stage: "requested" } });
      plannedChannel!.onmessage({ job_id: "planned-2", profile_id: "demo", event: { kind: "retrying", code: "service_error", message: "The service answered 500.", in_secs: 60 } });
      await settle();
      const note = byTest("backup-retrying")?.textContent ?? "";
      expect(note).toContain("The service answered 500.");
      expect(note, "when the next try comes").toMatch(/tries again at \d\d:\d\d/);
      expect(byTest("running-demo")?.textContent, "the klant's tag").toBe("trying again soon");
      plannedChannel!.onmessage({ job_id: "planned-2", profile_id: "demo", event: { kind: "stage", stage: "requested" } });
      await settle();
      expect(byTest("backup-retrying"), "the next try replaces the note").toBeNull();
      expect(byTest("running-demo")?.textContent).toBe("backup running");
      plannedChannel!.onmessage({ job_id: "planned-2", profile_id: "demo", event: { kind: "retrying", code: "service_error", message: "The service answered 500.", in_secs: 120 } });
      await settle();
      await click("cancel-backup");
      expect(calls.some((c) => c.cmd === "cancel_backup" && c.args.jobId === "planned-2"), "Cancel reaches the waiting job").toBe(true);
    });

    it("shows a backup its plan started under its own klant, like one started here", async () => {
      fakeBackend(calls, { demoStarted: true });
      await startUi();
      await settle();
      expect(plannedChannel, "the window subscribes to planned backups").not.toBeNull();
      plannedChannel!.onmessage({ job_id: "planned-1", profile_id: "demo", event: { kind: "stage", stage: "accepted" } });
      await settle();
      expect(byTest("stage-waiting")).not.toBeNull();
      expect(byTest("running-demo")).not.toBeNull();
      plannedChannel!.onmessage({ job_id: "planned-1", profile_id: "demo", event: { kind: "saved", path: "/home/user/Backups/Demo/owner-backup.zip", bytes: 10, sha256: "ab".repeat(32) } });
      await settle();
      expect(byTest("backup-saved")?.textContent).toContain("/home/user/Backups/Demo/owner-backup.zip");
    });
  });
});

/** Words that mark a text as English (none of them is Dutch). */
const englishWords = /\b(the|and|your|with|this|could|should|please|will|not|from|failed|there|which|what|when|saved|waiting|download(ing)?|sign(ed)? in|backups?)\b/i;

/** Every text a person sees or hears in `root` (text, labels, titles, placeholders), except
 * inside a closed <details> (Rust's technical words) and code (paths, hashes, names). */
function visibleText(root: Element): string[] {
  const out: string[] = [];
  const walk = (el: Element) => {
    if (el.tagName === "DETAILS" && !(el as HTMLDetailsElement).open) {
      const summary = el.querySelector("summary");
      if (summary) walk(summary);
      return;
    }
    if (el.tagName === "CODE" || el.tagName === "SCRIPT" || el.tagName === "STYLE") return;
    for (const attr of ["aria-label", "title", "placeholder"]) {
      const value = el.getAttribute(attr);
      if (value) out.push(value);
    }
    for (const node of el.childNodes) {
      if (node.nodeType === Node.TEXT_NODE && node.textContent?.trim()) out.push(node.textContent.trim());
      else if (node.nodeType === Node.ELEMENT_NODE) walk(node as Element);
    }
  };
  walk(root);
  return out;
}
