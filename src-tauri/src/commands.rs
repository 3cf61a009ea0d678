//! The commands: one line each into one part of `DesktopApp` (`app.plans`, `app.backups`, …).

use std::sync::Arc;

use kluis_desktop::profiles::{ProfileInput, ProfileView, Settings};
use kluis_desktop::UpdateView;
use kluis_desktop::{
    AppError, AppJobEvent, CallbackInput, CallbackTestResult, DemoInfo, DesktopApp, HistoryEntry,
    KlantStatus, MailInput, MailSettings, Permissions, PlanInput, PlannedEvent, ResumedEvent,
    ResumedJob, Retention, SessionInfo, TrayAction, VerifyReport,
};
use kluis_desktop::{
    BandwidthLimit, BucketInput, EncryptionInput, KitMade, ReportExport, ReportRequest,
};
use kluis_desktop::{CarriedOn, FoundCopies, RecoverProgress};
use kluis_desktop::{Field, ImportDefaults, ImportPreview, ImportProgress, ImportResult};
use kluis_desktop::{ManyChange, ManyPreview};
use kluis_desktop::{OfficeInvite, OfficeJoinInput, OfficeJoined, OfficeMembership, OfficeView};
use kluis_desktop::{SftpInput, SftpServer};
use tauri::ipc::Channel;
use tauri::State;

use crate::LaunchInfo;

type App<'a> = State<'a, DesktopApp>;
type Res<T> = Result<T, AppError>;

fn job_id(id: &str) -> Res<uuid::Uuid> {
    uuid::Uuid::parse_str(id).map_err(|_| AppError::NotFound("Unknown backup.".into()))
}

#[tauri::command]
fn launch_info(launch: State<'_, LaunchInfo>) -> LaunchInfo {
    *launch
}

#[tauri::command]
fn profiles(app: App<'_>) -> Vec<ProfileView> {
    app.accounts.list()
}

#[tauri::command]
async fn save_profile(app: App<'_>, input: ProfileInput) -> Res<ProfileView> {
    app.accounts.save_profile(input).await
}

#[tauri::command]
async fn forget_profile(app: App<'_>, profile_id: String) -> Res<()> {
    app.accounts.forget_profile(&profile_id).await
}

#[tauri::command]
async fn choose_profile_ca(app: App<'_>, profile_id: String) -> Res<ProfileView> {
    app.accounts.choose_profile_ca(&profile_id).await
}

#[tauri::command]
fn clear_profile_ca(app: App<'_>, profile_id: String) -> Res<ProfileView> {
    app.accounts.clear_profile_ca(&profile_id)
}

#[tauri::command]
async fn sign_in(app: App<'_>, profile_id: String) -> Res<SessionInfo> {
    app.accounts.sign_in(&profile_id).await
}

#[tauri::command]
async fn sign_out(app: App<'_>, profile_id: String) -> Res<()> {
    app.accounts.sign_out(&profile_id).await
}

#[tauri::command]
async fn environment(app: App<'_>, profile_id: String) -> Res<serde_json::Value> {
    app.accounts.environment(&profile_id).await
}

#[tauri::command]
async fn permissions(app: App<'_>, profile_id: String) -> Res<Permissions> {
    app.accounts.permissions(&profile_id).await
}

#[tauri::command]
async fn start_backup(
    app: App<'_>,
    profile_id: String,
    on_event: Channel<AppJobEvent>,
) -> Res<String> {
    app.backups
        .start_backup(&profile_id, Arc::new(move |e| drop(on_event.send(e))))
        .await
        .map(|id| id.to_string())
}

#[tauri::command]
async fn save_backup(app: App<'_>, job_id: String) -> Res<Option<kluis_desktop::Saved>> {
    app.backups.save_backup(self::job_id(&job_id)?).await
}

#[tauri::command]
async fn cancel_backup(app: App<'_>, job_id: String) -> Res<()> {
    app.backups.cancel_backup(self::job_id(&job_id)?).await
}

#[tauri::command]
fn history(app: App<'_>, profile_id: Option<String>) -> Res<Vec<kluis_desktop::HistoryEntry>> {
    app.backups.history(profile_id.as_deref())
}

#[tauri::command]
fn show_backup(app: App<'_>, history_id: String, select: bool) -> Res<()> {
    app.backups.show_backup(self::job_id(&history_id)?, select)
}

#[tauri::command]
async fn backup_copies(app: App<'_>, history_id: String) -> Res<Vec<kluis_desktop::HeldCopy>> {
    app.backups.backup_copies(self::job_id(&history_id)?).await
}

#[tauri::command]
async fn backup_contents(
    app: App<'_>,
    history_id: String,
    copy: Option<String>,
) -> Res<Vec<kluis_desktop::BackupEntry>> {
    app.backups
        .backup_contents(self::job_id(&history_id)?, copy)
        .await
}

#[tauri::command]
async fn restore_backup(
    app: App<'_>,
    history_id: String,
    copy: Option<String>,
    only: Vec<String>,
    on_progress: Channel<kluis_desktop::RestoreProgress>,
) -> Res<Option<kluis_desktop::RestoreSummary>> {
    let progress = Arc::new(move |p| drop(on_progress.send(p)));
    app.backups
        .restore_backup(self::job_id(&history_id)?, copy, only, progress)
        .await
}

#[tauri::command]
async fn test_restore(app: App<'_>, history_id: String) -> Res<Vec<kluis_desktop::RoundTest>> {
    app.backups.test_restore(self::job_id(&history_id)?).await
}

#[tauri::command]
fn settings(app: App<'_>) -> Settings {
    app.settings.current()
}

#[tauri::command]
async fn choose_save_folder(app: App<'_>) -> Res<Settings> {
    app.settings.choose_save_folder().await
}

#[tauri::command]
fn clear_save_folder(app: App<'_>) -> Res<Settings> {
    app.settings.clear_save_folder()
}

#[tauri::command]
async fn choose_tunnel_program(app: App<'_>) -> Res<Settings> {
    app.settings.choose_tunnel_program().await
}

#[tauri::command]
async fn set_callback(app: App<'_>, input: CallbackInput) -> Res<Settings> {
    app.settings.set_callback(input).await
}

#[tauri::command]
async fn test_callback(app: App<'_>, profile_id: String) -> Res<CallbackTestResult> {
    app.settings.test_callback(&profile_id).await
}

#[tauri::command]
async fn resume_backups(app: App<'_>, on_event: Channel<ResumedEvent>) -> Res<Vec<ResumedJob>> {
    app.backups
        .resume_backups(Arc::new(move |e| drop(on_event.send(e))))
        .await
}

#[tauri::command]
async fn start_demo(app: App<'_>) -> Res<DemoInfo> {
    app.start_demo().await
}

#[tauri::command]
fn open_demo(app: App<'_>) -> Res<()> {
    app.open_demo()
}

#[tauri::command]
fn set_plan(app: App<'_>, profile_id: String, input: PlanInput) -> Res<ProfileView> {
    app.plans.set_plan(&profile_id, input)
}

#[tauri::command]
fn set_monitor(app: App<'_>, profile_id: String, ping_url: Option<String>) -> Res<ProfileView> {
    app.plans.set_monitor(&profile_id, ping_url)
}

#[tauri::command]
fn set_retention(app: App<'_>, profile_id: String, rule: Option<Retention>) -> Res<ProfileView> {
    app.keeping.set_retention(&profile_id, rule)
}

#[tauri::command]
fn preview_retention(app: App<'_>, profile_id: String, rule: Retention) -> Res<Vec<HistoryEntry>> {
    app.keeping.preview_retention(&profile_id, rule)
}

#[tauri::command]
async fn set_encryption(
    app: App<'_>,
    profile_id: String,
    input: EncryptionInput,
) -> Res<ProfileView> {
    app.accounts.set_encryption(&profile_id, input).await
}

#[tauri::command]
fn set_verify_monthly(app: App<'_>, profile_id: String, on: bool) -> Res<ProfileView> {
    app.keeping.set_verify_monthly(&profile_id, on)
}

#[tauri::command]
fn set_restore_test_monthly(app: App<'_>, profile_id: String, on: bool) -> Res<ProfileView> {
    app.keeping.set_restore_test_monthly(&profile_id, on)
}

#[tauri::command]
fn set_bandwidth(app: App<'_>, limit: Option<BandwidthLimit>) -> Res<Settings> {
    app.settings.set_bandwidth(limit)
}

#[tauri::command]
fn set_min_free(app: App<'_>, mib: Option<u64>) -> Res<Settings> {
    app.settings.set_min_free(mib)
}

#[tauri::command]
async fn add_copy_folder(app: App<'_>, name: String) -> Res<Settings> {
    app.settings.add_copy_folder(&name).await
}

#[tauri::command]
async fn add_copy_bucket(app: App<'_>, input: BucketInput) -> Res<Settings> {
    app.settings.add_copy_bucket(input).await
}

#[tauri::command]
async fn sftp_host_key(app: App<'_>, server: SftpServer) -> Res<kluis_desktop::HostKey> {
    app.settings.sftp_host_key(server).await
}

#[tauri::command]
async fn add_copy_sftp(app: App<'_>, input: SftpInput) -> Res<Settings> {
    app.settings.add_copy_sftp(input).await
}

#[tauri::command]
fn set_copy_target_rule(app: App<'_>, target_id: String, rule: Option<Retention>) -> Res<Settings> {
    app.settings.set_copy_target_rule(&target_id, rule)
}

#[tauri::command]
async fn test_copy_target(app: App<'_>, target_id: String) -> Res<()> {
    app.settings.test_copy_target(&target_id).await
}

#[tauri::command]
async fn remove_copy_target(app: App<'_>, target_id: String) -> Res<Settings> {
    app.settings.remove_copy_target(&target_id).await
}

#[tauri::command]
fn set_copy_to(
    app: App<'_>,
    profile_id: String,
    target_ids: Option<Vec<String>>,
) -> Res<ProfileView> {
    app.keeping.set_copy_to(&profile_id, target_ids)
}

#[tauri::command]
async fn verify_backups(app: App<'_>) -> Res<VerifyReport> {
    app.keeping.verify_backups().await
}

#[tauri::command]
async fn export_report(app: App<'_>, request: ReportRequest) -> Res<Option<ReportExport>> {
    app.keeping.export_report(request).await
}

#[tauri::command]
async fn make_recovery_kit(app: App<'_>, with_target_secrets: bool) -> Res<Option<KitMade>> {
    app.settings.make_recovery_kit(with_target_secrets).await
}

#[tauri::command]
async fn join_recovery_kit(app: App<'_>) -> Res<Option<KitMade>> {
    app.settings.join_recovery_kit().await
}

#[tauri::command]
async fn find_copies(
    app: App<'_>,
    target_id: String,
    pasted_key: Option<String>,
) -> Res<Option<FoundCopies>> {
    app.recovery.find_copies(&target_id, pasted_key).await
}

#[tauri::command]
async fn restore_found(
    app: App<'_>,
    location: String,
    on_progress: Channel<RecoverProgress>,
) -> Res<Option<kluis_desktop::RestoreSummary>> {
    let progress = Arc::new(move |p| drop(on_progress.send(p)));
    app.recovery.restore_found(&location, progress).await
}

#[tauri::command]
fn cancel_restore_found(app: App<'_>) {
    app.recovery.cancel_restore();
}

#[tauri::command]
async fn carry_on(app: App<'_>, computer: String, replace_kit: bool) -> Res<CarriedOn> {
    app.recovery.carry_on(computer, replace_kit).await
}

#[tauri::command]
fn close_recovery(app: App<'_>) {
    app.recovery.close();
}

#[tauri::command]
async fn test_monitor(app: App<'_>, profile_id: String) -> Res<()> {
    app.plans.test_monitor(&profile_id).await
}

#[tauri::command]
fn cancel_all(app: App<'_>) -> usize {
    app.plans.cancel_all()
}

#[tauri::command]
fn set_unattended_at_once(app: App<'_>, n: u32) -> Res<Settings> {
    app.plans.set_unattended_at_once(n)
}

/// The window's language, kept for kluis-tray and the notifications; the window's own tray
/// (where kluis-tray cannot run) is told at once here: its menu is the shell's.
#[tauri::command]
fn set_language<R: tauri::Runtime>(
    handle: tauri::AppHandle<R>,
    app: App<'_>,
    language: kluis_desktop::Language,
) -> Res<Settings> {
    let settings = app.settings.set_language(language)?;
    crate::tray::speak(&handle, language);
    Ok(settings)
}

#[tauri::command]
fn set_notify_desktop(app: App<'_>, on: bool) -> Res<Settings> {
    app.alerts.set_notify_desktop(on)
}

#[tauri::command]
async fn test_notification(app: App<'_>) -> Res<()> {
    app.alerts.test_notification().await
}

#[tauri::command]
fn office_membership(app: App<'_>) -> Res<Option<OfficeMembership>> {
    Ok(app.office.membership())
}

#[tauri::command]
async fn join_office(app: App<'_>, input: OfficeJoinInput) -> Res<Option<OfficeJoined>> {
    app.office.join(input).await
}

#[tauri::command]
async fn leave_office(app: App<'_>) -> Res<Option<String>> {
    app.office.leave().await
}

#[tauri::command]
async fn invite_office_pc(app: App<'_>, pc: String) -> Res<OfficeInvite> {
    app.office.invite(&pc).await
}

#[tauri::command]
async fn office_view(app: App<'_>) -> Res<OfficeView> {
    app.office.view().await
}

#[tauri::command]
fn mail(app: App<'_>) -> Res<Option<MailSettings>> {
    app.alerts.mail()
}

#[tauri::command]
async fn set_mail(app: App<'_>, input: MailInput) -> Res<Option<MailSettings>> {
    app.alerts.set_mail(input).await
}

#[tauri::command]
async fn remove_mail(app: App<'_>) -> Res<()> {
    app.alerts.remove_mail().await
}

#[tauri::command]
async fn test_mail(app: App<'_>) -> Res<()> {
    app.alerts.test_mail().await
}

/// Async, so the history is read off the main thread (a sync command runs on it).
#[tauri::command]
async fn dashboard(app: App<'_>) -> Res<Vec<KlantStatus>> {
    app.keeping.dashboard()
}

#[tauri::command]
async fn backup_all(app: App<'_>) -> Res<usize> {
    app.plans.backup_all().await
}

#[tauri::command]
fn watch_planned(app: App<'_>, on_event: Channel<PlannedEvent>) {
    app.plans
        .watch_planned(Arc::new(move |e| drop(on_event.send(e))))
}

/// The tray menu's actions, from the webview (the UI's "Pause plans"; the tests, where no tray
/// host shows the icon): the menu's own path.
#[tauri::command]
fn tray_action<R: tauri::Runtime>(app: tauri::AppHandle<R>, action: TrayAction) -> Res<()> {
    crate::tray::act(&app, action)
}

#[tauri::command]
fn set_file_name_template(app: App<'_>, template: String) -> Res<Settings> {
    app.settings.set_file_name_template(&template)
}

#[tauri::command]
fn start_at_login(app: App<'_>) -> Res<bool> {
    app.background.start_at_login()
}

#[tauri::command]
fn set_start_at_login(app: App<'_>, on: bool) -> Res<bool> {
    app.background.set_start_at_login(on)
}

#[tauri::command]
async fn open_import(app: App<'_>) -> Res<Option<ImportPreview>> {
    app.imports.open_import().await
}

#[tauri::command]
fn import_column(app: App<'_>, field: Field, column: Option<u32>) -> Res<ImportPreview> {
    app.imports.import_column(field, column)
}

#[tauri::command]
fn import_defaults(app: App<'_>, defaults: ImportDefaults) -> Res<ImportPreview> {
    app.imports.import_defaults(defaults)
}

#[tauri::command]
async fn import_vault(app: App<'_>) -> Res<ImportPreview> {
    app.imports.import_vault().await
}

#[tauri::command]
async fn run_import(app: App<'_>, on_row: Channel<ImportProgress>) -> Res<ImportResult> {
    let progress = Arc::new(move |p| drop(on_row.send(p)));
    app.imports.run_import(progress).await
}

#[tauri::command]
fn cancel_import(app: App<'_>) {
    app.imports.cancel_import()
}

#[tauri::command]
fn close_import(app: App<'_>) {
    app.imports.close_import()
}

#[tauri::command]
async fn export_klanten(app: App<'_>) -> Res<Option<String>> {
    app.imports.export_klanten().await
}

#[tauri::command]
fn update_view(app: App<'_>) -> UpdateView {
    app.updates.view()
}

#[tauri::command]
async fn look_for_update(app: App<'_>) -> Res<UpdateView> {
    Ok(app.updates.look(true).await)
}

#[tauri::command]
async fn install_update(app: App<'_>) -> Res<UpdateView> {
    app.updates.install().await
}

#[tauri::command]
fn set_install_updates(app: App<'_>, automatic: bool) -> Res<UpdateView> {
    app.updates.set_automatic(automatic)
}

/// Async, so the history is read off the main thread (a sync command runs on it).
#[tauri::command]
async fn preview_many(app: App<'_>, ids: Vec<String>, change: ManyChange) -> Res<Vec<ManyPreview>> {
    app.preview_many(&ids, &change)
}

#[tauri::command]
async fn edit_many(app: App<'_>, ids: Vec<String>, change: ManyChange) -> Res<Vec<ProfileView>> {
    app.edit_many(&ids, change).await
}

#[tauri::command]
async fn choose_klant_folder(app: App<'_>, profile_id: String) -> Res<ProfileView> {
    app.plans.choose_klant_folder(&profile_id).await
}

#[tauri::command]
fn clear_klant_folder(app: App<'_>, profile_id: String) -> Res<ProfileView> {
    app.plans.clear_klant_folder(&profile_id)
}

pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    use tauri::generate_handler;
    crate::with_commands!(generate_handler)
}
