// The UI's state, as Preact signals: a view reads the signals it shows and re-renders when
// one of those changes — a progress event redraws the job's line, nothing else. Actions write
// them. Form drafts live here too, so nothing typed is lost when something else changes.
// Nothing secret is kept here but what the user is typing, until it is sent (the UI never
// receives a secret back).
import { computed, signal } from "@preact/signals";
import type { UiError } from "./api";
import { isRunning, type BackupView } from "./backup-state";
import { t, type Key } from "./i18n";
import type { CarriedOn, FoundCopies, ImportPreview, ImportResult, ManyPreview, OfficeInvite, OfficeMembership, OfficeView, RecoverProgress, RowOutcome, UpdateView } from "./bindings";
import type { BucketInput, Entry, HostKey, HeldCopy, RestoreSummary, RoundTest, SftpInput, CallbackChoice, CallbackTestResult, Day, HistoryEntry, KlantStatus, KitMade, MailInput, MailSettings, Permissions, ProfileView, ReportExport, ReportFormat, Schedule, Settings, VerifyReport } from "./bindings";
import { localDay } from "./format";
import { defaultSort, type Sort } from "./dashboard";

export type Tab = "backup" | "history" | "environment" | "settings";

/** An error on screen, and the klant it belongs to (null: not one klant's, e.g. a setting). */
/** A question the confirmation dialog asks (as texts, so it follows a change of language);
 * `resolve` gets the answer. */
export type Confirmation = { title: Key; text: Key; yes: Key; resolve: (yes: boolean) => void };

export type ShownError = { error: UiError; profileId: string | null };

/** The /util/environment answer, or why there is none. */
export type EnvironmentView = { ok: unknown } | { error: UiError };

/** A backup this window follows: one started here, or one an earlier run left (resumed). */
export type Job = {
  /** Stable while the job lives (its list key); the job id once Rust has given it. */
  key: string;
  jobId: string | null;
  profileId: string;
  resumed: boolean;
  view: BackupView;
};

/** What the profile form holds while it is open (`id` null: a new profile). */
export type ProfileDraft = {
  id: string | null;
  name: string;
  base_url: string;
  username: string;
  api_key: string;
  password: string;
  openapi_url: string;
  /** Tags as typed, separated by commas. */
  tags: string;
};

/** The plan form: every kind's fields, so switching kinds keeps what was chosen. */
export type PlanDraft = {
  profileId: string;
  kind: Schedule["kind"];
  at: string;
  day: Day;
  hours: string;
  paused: boolean;
  /** A monitor's ping URL being typed (the saved one is never sent back). */
  pingUrl: string;
  /** The retention rule being typed: how many newest, daily, weekly, monthly ("" or 0: none). */
  keep: Record<KeepPart, string>;
  /** What saving the typed rule would remove now (shown before it is saved), or null. */
  wouldRemove: HistoryEntry[] | null;
  /** Encryption at rest as chosen in the form; the passphrase only until it is sent. */
  encryption: "none" | "passphrase" | "recipient";
  passphrase: string;
  recipient: string;
};

/** The download limit as typed: MB/s ("" or 0: no limit), and office hours. */
export type SpeedDraft = { mbPerSec: string; officeHours: boolean; from: string; to: string };

export type KeepPart = "keep_last" | "keep_daily" | "keep_weekly" | "keep_monthly";

/** The callback settings form: the chosen kind and every kind's fields, so switching back
 * and forth keeps what was typed; the relay secret until it is sent. */
export type CallbackDraft = {
  kind: CallbackChoice["kind"];
  url: string;
  public_url: string;
  listen: string;
  program: string;
  relaySecret: string;
};

export const state = {
  demo: signal(false),
  demoBaseUrl: signal<string | null>(null),
  /** The demo app's own folder (its backups, copies, settings and history). */
  demoFolder: signal<string | null>(null),
  profiles: signal<ProfileView[]>([]),
  selected: signal<string | null>(null),
  /** The dashboard is on screen (instead of the selected profile's tabs). */
  overview: signal(false),
  /** Every klant's standing, as the dashboard shows it. */
  dashboard: signal<KlantStatus[]>([]),
  dashboardSort: signal<Sort>(defaultSort),
  /** The dashboard shows only the klanten that need attention. */
  attentionOnly: signal(false),
  /** The klanten picked on the dashboard (edit many at once), and the last one clicked. */
  picked: signal<ReadonlySet<string>>(new Set()),
  pickedAnchor: signal<string | null>(null),
  /** "Change the picked klanten" while open. */
  many: signal<ManyDraft | null>(null),
  /** The search typed (profile list and dashboard) and the tag chosen (null: every tag). */
  find: signal(""),
  tagFilter: signal<string | null>(null),
  /** Profile ids with a live session. */
  signedIn: signal<ReadonlySet<string>>(new Set()),
  /** The open profile form's draft, or null. */
  editing: signal<ProfileDraft | null>(null),
  /** Import klanten… while open (null: closed). */
  importing: signal<Importing | null>(null),
  /** Restore from a copy… while open (null: closed). */
  recovering: signal<Recovering | null>(null),
  /** Export klanten…: where the list went, or why not (null: not this session). */
  exported: signal<{ path: string } | { error: UiError } | null>(null),
  tab: signal<Tab>("backup"),
  /** Per profile id: what is on screen belongs to the klant it was loaded for, so another
   * klant's environment or permissions never show under the selected one. */
  environments: signal<ReadonlyMap<string, EnvironmentView>>(new Map()),
  permissions: signal<ReadonlyMap<string, Permissions>>(new Map()),
  history: signal<HistoryEntry[]>([]),
  historyFilter: signal<string | null>(null),
  /** History → a backup → Contents: its entries (null while they are read), the search typed,
   * and a restore under way (its progress) or ended (what it did, or why not). */
  contents: signal<Contents | null>(null),
  /** History → Test restore of a backup: under way, its recorded result, or why it could not run. */
  restoreTest: signal<{ historyId: string; result: "testing" | RoundTest[] | { error: UiError } } | null>(null),
  /** The report for auditors' period (local days, YYYY-MM-DD) and format: the last 30 days. */
  reportDraft: signal<{ from: string; to: string; format: ReportFormat }>({ from: localDay(new Date(), 29), to: localDay(new Date()), format: "csv" }),
  /** "Export report": under way, where it went, or its error (null: none this session). */
  reportExport: signal<"exporting" | ReportExport | { error: UiError } | null>(null),
  /** "Make the recovery kit…" (or "Use the office's kit…", `joined`): under way, where its page
   * went (or the key file read), or its error (null: none). */
  recoveryKit: signal<"making" | (KitMade & { joined: boolean }) | { error: UiError } | null>(null),
  settings: signal<Settings>({ save_folder: null, callback: { kind: "loopback" }, relay_secret_saved: false, unattended_at_once: 2, notify_desktop: true, paused_together: [], file_name_template: null, bandwidth: null, min_free_mib: null, copy_targets: [], install_updates: false, recovery: null }),
  /** Settings → Updates (null: not read yet). */
  update: signal<UpdateView | null>(null),
  /** The file name template being typed (null: the saved one is shown). */
  fileNameDraft: signal<string | null>(null),
  /** Settings → download speed being typed (null: showing the saved limit). */
  speedDraft: signal<SpeedDraft | null>(null),
  /** Settings → free space being typed (null: showing the saved minimum). */
  minFreeDraft: signal<string | null>(null),
  /** Whether Kluis starts at login (null until known, or where it cannot be told). */
  startAtLogin: signal<boolean | null>(null),
  callbackDraft: signal<CallbackDraft | null>(null),
  /** The last "Test connection": its result or error; `testing` while it runs. */
  callbackTest: signal<{ ok: CallbackTestResult } | { error: UiError } | "testing" | null>(null),
  callbackSaved: signal(false),
  jobs: signal<Job[]>([]),
  error: signal<ShownError | null>(null),
  busy: signal(false),
  /** Profiles waiting in Backup all's queue for their turn. */
  queued: signal<ReadonlySet<string>>(new Set()),
  /** "Send test" to a klant's monitor: under way, answered, or refused. */
  monitorTest: signal<{ profileId: string; result: "testing" | "ok" | { error: UiError } } | null>(null),
  /** Settings → Office: the office this PC joined (null: none). */
  office: signal<OfficeMembership | null>(null),
  /** Settings → Office's join form as typed (the keys only until sent). */
  officeDraft: signal<OfficeDraft>({ code: "", hub: "", pc: "", pcKey: "", officeKey: "", ownCa: false }),
  /** Add a PC: the new PC's name as typed, and the join code made for it (shown once). */
  officeInviteName: signal(""),
  officeInvite: signal<OfficeInvite | null>(null),
  /** Leaving could not revoke this PC's key at the hub: why. */
  officeLeftNote: signal<string | null>(null),
  /** The office key this PC just made, shown once (null: none to show). */
  officeMadeKey: signal<string | null>(null),
  /** The dashboard's Office: loading, the view, or why it could not be had (null: closed). */
  officeView: signal<"loading" | OfficeView | { error: UiError } | null>(null),
  /** Settings → E-mail as saved (null: not set up); kept apart from `settings`, whose file
   * keeps it as kluis-reporting writes it. */
  mail: signal<MailSettings | null>(null),
  /** Why the saved e-mail settings could not be read (null: they could, or there are none). */
  mailProblem: signal<UiError | null>(null),
  /** Settings → E-mail being edited (null: the saved settings are shown). */
  mailDraft: signal<MailDraft | null>(null),
  /** "Send test" of e-mail: under way, sent, or refused. */
  mailTest: signal<"testing" | "ok" | { error: UiError } | null>(null),
  /** The name typed for a new copy target. */
  copyTargetName: signal(""),
  /** A copy target's own retention rule being typed (null: none open). */
  targetRule: signal<{ targetId: string; keep: Record<KeepPart, string> } | null>(null),
  /** "Add a bucket" being filled in (null: closed). */
  bucketDraft: signal<BucketDraft | null>(null),
  /** "Add an SFTP server" being filled in (null: closed). */
  sftpDraft: signal<SftpDraft | null>(null),
  /** "Test" of a copy target: which, and under way, written, or refused. */
  copyTest: signal<{ targetId: string; result: "testing" | "ok" | { error: UiError } } | null>(null),
  /** "Send test" of desktop notifications: under way, shown, or refused. */
  notificationTest: signal<"testing" | "ok" | { error: UiError } | null>(null),
  /** The plan form's draft (for the profile in the form), or null. */
  planDraft: signal<PlanDraft | null>(null),
  /** The open confirmation, or null. */
  confirming: signal<Confirmation | null>(null),
  /** "Verify backups": under way, its report, or its error (null: not run this session). */
  verifying: signal<"verifying" | VerifyReport | { error: UiError } | null>(null),
  /** The wall clock, ticking each second while a job waits (only its elapsed time reads it). */
  now: signal(Date.now()),
};

/** Plans are paused as a whole ("Pause plans", in the tray or Settings). */
export const plansPaused = computed(() => state.settings.value.paused_together.length > 0);

export const selectedProfile = computed(() => state.profiles.value.find((p) => p.id === state.selected.value));

/** The newest backup started here for the selected profile (the Backup panel shows it). */
export const currentJob = computed(() => {
  const id = state.selected.value;
  const mine = state.jobs.value.filter((j) => !j.resumed && j.profileId === id);
  return mine[mine.length - 1];
});

export const selectedEnvironment = computed(() => (state.selected.value ? state.environments.value.get(state.selected.value) : undefined));
export const selectedPermissions = computed(() => (state.selected.value ? state.permissions.value.get(state.selected.value) : undefined));

/** A computed set of profile ids that stays the same object while its members do: a job's
 * every stage and progress changes `state.jobs`, and the views that read only which klanten
 * run (the profile list, the dashboard's rows) need not render again for it. */
function idSet(ids: () => string[]) {
  let last = new Set<string>();
  return computed(() => {
    const next = new Set(ids());
    if (next.size === last.size && [...next].every((id) => last.has(id))) return last;
    last = next;
    return next;
  });
}

/** Profile ids with a backup running (the profile list marks them). */
export const runningProfiles = idSet(() => state.jobs.value.filter((j) => isRunning(j.view)).map((j) => j.profileId));
/** Of those, the klanten whose backup failed for a passing reason and waits to try again. */
export const retryingProfiles = idSet(() => state.jobs.value.filter((j) => j.view.phase === "retrying").map((j) => j.profileId));

/** `map` with `key` set to `value`, or removed when `value` is undefined. */
export function withEntry<V>(map: ReadonlyMap<string, V>, key: string, value: V | undefined): ReadonlyMap<string, V> {
  const next = new Map(map);
  if (value === undefined) next.delete(key);
  else next.set(key, value);
  return next;
}

export const resumedJobs = computed(() => state.jobs.value.filter((j) => j.resumed));

/** The demo's profiles have names in the UI's language (the stored ones are English). */
const demoNames: Record<string, Key> = { demo: "demoName", "demo-restricted": "demoRestrictedName" };

/** The profiles by id (the dashboard looks up 200 names per render). */
const profilesById = computed(() => new Map(state.profiles.value.map((p) => [p.id, p])));

/** How a profile is named on screen. */
export function displayName(profile: ProfileView): string {
  const key = profile.demo ? demoNames[profile.id] : undefined;
  return key ? t(key) : profile.name;
}

/** A profile's name ("removed profile" when it was forgotten since). */
export function profileName(id: string): string {
  const profile = profilesById.value.get(id);
  return profile ? displayName(profile) : t("removedProfile");
}

/** A profile's tags, as one line ("" when it has none or was forgotten). */
export function profileTags(id: string): string {
  return profilesById.value.get(id)?.tags.join(", ") ?? "";
}

/** Replaces job `key`'s entry with `change(entry)`. */
export function updateJob(key: string, change: (job: Job) => Job): void {
  state.jobs.value = state.jobs.value.map((j) => (j.key === key ? change(j) : j));
}

export function findJob(key: string): Job | undefined {
  return state.jobs.value.find((j) => j.key === key);
}

/** Import klanten… (see `actions/imports.ts`): the file's preview, the address and api key
 * typed for rows without one (the key only until it is sent), and the import once started —
 * each row's outcome as it comes (null: not ended yet), then its result. */
export type Importing = {
  preview: ImportPreview;
  baseUrl: string;
  apiKey: string;
  run: null | { outcomes: (RowOutcome | null)[]; cancelling: boolean } | { result: ImportResult } | { error: UiError };
};

/** One change for many klanten (see `actions/many.ts`): each part only when ticked; the
 * passphrase only until it is sent. */
/** Restore from a copy…: the copy target chosen, what was found there with the kit's key (the
 * key itself stays in its text field and Rust, never in the state), a restore and Carry on. */
export type Recovering = {
  targetId: string | null;
  looking: boolean;
  found: FoundCopies | null;
  error: UiError | null;
  /** The klant whose backups are shown (null: every klant). */
  klant: string | null;
  restore: { location: string; progress: RecoverProgress | null } | { location: string; done: RestoreSummary } | { location: string; error: UiError } | null;
  carried: "carrying" | CarriedOn | { error: UiError } | null;
};

export type ManyDraft = {
  planOn: boolean;
  plan: { kind: Schedule["kind"]; at: string; day: Day; hours: string; paused: boolean };
  keepOn: boolean;
  keep: Record<KeepPart, string>;
  copyOn: boolean;
  /** The targets chosen (null: every target). */
  copyTo: string[] | null;
  /** The save folder: one picked in Rust's dialog at Apply, or the office's. */
  folderOn: boolean;
  folder: "choose" | "office";
  encryptOn: boolean;
  encryption: "none" | "passphrase" | "recipient";
  passphrase: string;
  recipient: string;
  addTag: string;
  removeTag: string;
  /** What Rust adds to the preview, once asked (null: not previewed since the last change). */
  preview: ManyPreview[] | null;
  result: null | "applying" | { done: number } | { error: UiError };
};

/** The bucket form's fields as typed (the secret key goes to Rust once, with Add). */
export type BucketDraft = { endpoint: string; region: string; bucket: string; prefix: string; pathStyle: boolean; accessKeyId: string; secretKey: string; ownCa: boolean; lock: boolean; lockDays: string; lockMode: "governance" | "compliance" };

/** An empty bucket form. */
export function newBucketDraft(): BucketDraft {
  return { endpoint: "https://", region: "us-east-1", bucket: "", prefix: "", pathStyle: false, accessKeyId: "", secretKey: "", ownCa: false, lock: false, lockDays: "30", lockMode: "governance" };
}

/** An open Contents panel (see `state.contents`). */
export type Contents = {
  historyId: string;
  /** The copies the copy targets hold, and which is read (null: the file on this computer). */
  copies: HeldCopy[];
  from: string | null;
  entries: Entry[] | null;
  search: string;
  restore: null | { progress: { done: number; total: number } } | { done: RestoreSummary } | { error: UiError };
};

/** The SFTP form's fields as typed, and the host key the server showed on "Connect" (null:
 * not connected yet, or the server's address changed since). The password or passphrase goes
 * to Rust once, with "Trust and add". */
export type SftpDraft = { host: string; port: string; user: string; path: string; login: "password" | "key"; secret: string; shown: HostKey | null };

/** An empty SFTP form. */
export function newSftpDraft(): SftpDraft {
  return { host: "", port: "22", user: "", path: "", login: "password", secret: "", shown: null };
}

/** What "Trust and add" sends for `draft` (connected), named `name`: the key shown is the one
 * trusted; a key login's file is picked in Rust's dialog. */
export function sftpInputOf(name: string, draft: SftpDraft & { shown: HostKey }): SftpInput {
  return {
    name,
    place: { host: draft.host, port: Number(draft.port) || 0, user: draft.user, path: draft.path, login: draft.login === "key" ? { method: "key", key_file: "" } : { method: "password" }, host_key: draft.shown.fingerprint },
    secret: draft.secret,
  };
}

/** What Add sends for `draft`, named `name` (the Rust side checks it and says what is wrong). */
export function bucketInputOf(name: string, draft: BucketDraft): BucketInput {
  return {
    name,
    place: { endpoint: draft.endpoint, region: draft.region, bucket: draft.bucket, prefix: draft.prefix, path_style: draft.pathStyle, access_key_id: draft.accessKeyId, lock: draft.lock ? { mode: draft.lockMode, days: Number(draft.lockDays) || 0 } : null },
    secret_key: draft.secretKey,
    own_ca: draft.ownCa,
  };
}

/** Settings → Office's join form: a join code from a PC of the office, or the hub's address, this PC's name and key there, the
 * office key (empty for the office's first PC), and whether the hub's certificate is signed by
 * the office's own CA (picked in Rust's dialog when joining). */
export type OfficeDraft = { code: string; hub: string; pc: string; pcKey: string; officeKey: string; ownCa: boolean };

/** The e-mail form's fields as typed (the password only when typed: it never comes back). */
export type MailDraft = { server: string; port: string; username: string; password: string; from: string; to: string; daily: boolean; at: string };

/** The form's fields for the saved settings (empty ones when none are saved). */
function mailDraftOf(mail: MailSettings | null): MailDraft {
  return {
    server: mail?.server ?? "",
    port: String(mail?.port ?? 587),
    username: mail?.username ?? "",
    password: "",
    from: mail?.from ?? "",
    to: mail?.to.join(", ") ?? "",
    daily: mail?.when.kind === "daily",
    at: mail?.when.kind === "daily" ? mail.when.at : "08:00",
  };
}

/** What the e-mail form shows: the draft being typed, else the saved settings. */
export const mailShown = computed(() => state.mailDraft.value ?? mailDraftOf(state.mail.value));

/** What Save sends for `draft` (the Rust side checks it and says what is wrong). */
export function mailInputOf(draft: MailDraft): MailInput {
  return {
    settings: {
      server: draft.server,
      port: Number(draft.port) || 0,
      username: draft.username,
      password_saved: false,
      from: draft.from,
      to: [draft.to],
      when: draft.daily ? { kind: "daily", at: draft.at } : { kind: "each_failure" },
    },
    password: draft.password || null,
  };
}
