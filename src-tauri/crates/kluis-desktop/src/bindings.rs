//! The TypeScript declarations the UI imports (`ui/src/bindings.ts`), generated with ts-rs.
//! A test fails when the committed file is stale; `UPDATE_BINDINGS=1 cargo test -p
//! kluis-desktop bindings` rewrites it.

use ts_rs::TS;

/// The whole bindings file.
pub fn typescript() -> String {
    let cfg = ts_rs::Config::default();
    let declarations = [
        kluis_core::Stage::decl(&cfg),
        kluis_core::Code::decl(&cfg),
        crate::error::AppOnlyCode::decl(&cfg),
        crate::error::AppCode::decl(&cfg),
        kluis_core::Progress::decl(&cfg),
        kluis_core::Saved::decl(&cfg),
        kluis_core::verify::Finding::decl(&cfg),
        kluis_core::history::Removal::decl(&cfg),
        kluis_core::history::Check::decl(&cfg),
        kluis_core::EncryptedFile::decl(&cfg),
        kluis_core::KlantKey::decl(&cfg),
        kluis_core::HistoryEntry::decl(&cfg),
        crate::events::AppJobEvent::decl(&cfg),
        crate::events::ResumedEvent::decl(&cfg),
        crate::events::PlannedEvent::decl(&cfg),
        kluis_core::plan::Day::decl(&cfg),
        kluis_core::plan::Schedule::decl(&cfg),
        kluis_core::plan::Plan::decl(&cfg),
        crate::app::PlanInput::decl(&cfg),
        crate::app::ResumedJob::decl(&cfg),
        kluis_profiles::DayMark::decl(&cfg),
        kluis_profiles::LastError::decl(&cfg),
        kluis_profiles::Copies::decl(&cfg),
        kluis_core::office_backups::OfficeBackup::decl(&cfg),
        kluis_profiles::KlantStatus::decl(&cfg),
        crate::error::ErrorPayload::decl(&cfg),
        kluis_core::trust::TrustedCa::decl(&cfg),
        kluis_core::presented::Presented::decl(&cfg),
        kluis_core::retention::Retention::decl(&cfg),
        kluis_core::encryption::EncryptionSetting::decl(&cfg),
        crate::app::EncryptionInput::decl(&cfg),
        crate::profiles::ProfileView::decl(&cfg),
        crate::profiles::ProfileInput::decl(&cfg),
        kluis_core::CallbackChoice::decl(&cfg),
        crate::callback::CallbackInput::decl(&cfg),
        crate::callback::CallbackTestResult::decl(&cfg),
        kluis_core::download::bandwidth::OfficeHours::decl(&cfg),
        kluis_core::download::bandwidth::BandwidthLimit::decl(&cfg),
        kluis_reporting::MailWhen::decl(&cfg),
        kluis_reporting::MailSettings::decl(&cfg),
        kluis_copies::s3::LockMode::decl(&cfg),
        kluis_copies::s3::ObjectLock::decl(&cfg),
        kluis_copies::s3::S3Place::decl(&cfg),
        kluis_copies::sftp::SftpPlace::decl(&cfg),
        kluis_copies::sftp::SftpLogin::decl(&cfg),
        kluis_copies::sftp::HostKey::decl(&cfg),
        kluis_copies::Place::decl(&cfg),
        kluis_copies::CopyTarget::decl(&cfg),
        crate::app::MailInput::decl(&cfg),
        crate::app::OfficeMembership::decl(&cfg),
        crate::app::OfficeJoinInput::decl(&cfg),
        crate::app::OfficeJoined::decl(&cfg),
        crate::app::OfficeInvite::decl(&cfg),
        kluis_office::view::PcRow::decl(&cfg),
        kluis_office::view::OnPc::decl(&cfg),
        kluis_office::Flag::decl(&cfg),
        kluis_office::view::KlantRow::decl(&cfg),
        kluis_office::OfficeView::decl(&cfg),
        crate::app::BucketInput::decl(&cfg),
        crate::app::SftpServer::decl(&cfg),
        kluis_restore::archive::EntryKind::decl(&cfg),
        kluis_restore::archive::Entry::decl(&cfg),
        kluis_core::restore_tests::RestoreTestRecord::decl(&cfg),
        kluis_profiles::restore_round::RoundTest::decl(&cfg),
        crate::app::HeldCopy::decl(&cfg),
        crate::app::NotRestored::decl(&cfg),
        crate::app::RestoreSummary::decl(&cfg),
        crate::app::RestoreProgress::decl(&cfg),
        crate::app::SftpInput::decl(&cfg),
        crate::profiles::Settings::decl(&cfg),
        kluis_profiles::settings::RecoverySetting::decl(&cfg),
        kluis_profiles::Language::decl(&cfg),
        crate::permissions::Endpoint::decl(&cfg),
        crate::permissions::Access::decl(&cfg),
        crate::permissions::PermissionSource::decl(&cfg),
        crate::permissions::Permissions::decl(&cfg),
        crate::app::SessionInfo::decl(&cfg),
        crate::app::DemoInfo::decl(&cfg),
        crate::app::LaunchInfo::decl(&cfg),
        crate::app::TrayAction::decl(&cfg),
        crate::app::CopyProblem::decl(&cfg),
        crate::app::VerifyReport::decl(&cfg),
        crate::app::ReportFormat::decl(&cfg),
        crate::app::ReportRequest::decl(&cfg),
        crate::app::ReportExport::decl(&cfg),
        crate::app::KitMade::decl(&cfg),
        crate::app::FoundEncryption::decl(&cfg),
        crate::app::FoundProof::decl(&cfg),
        crate::app::FoundBackup::decl(&cfg),
        crate::app::FoundComputer::decl(&cfg),
        crate::app::FoundCopies::decl(&cfg),
        crate::app::RecoverProgress::decl(&cfg),
        crate::app::KlantTakenOver::decl(&cfg),
        crate::app::CarriedOn::decl(&cfg),
        kluis_import::Field::decl(&cfg),
        kluis_import::Action::decl(&cfg),
        kluis_import::Outcome::decl(&cfg),
        kluis_import::RowOutcome::decl(&cfg),
        crate::app::FieldColumn::decl(&cfg),
        crate::app::ImportRow::decl(&cfg),
        crate::app::ImportPreview::decl(&cfg),
        crate::app::ImportDefaults::decl(&cfg),
        crate::app::ImportProgress::decl(&cfg),
        crate::app::ImportResult::decl(&cfg),
        crate::app::RuleChange::decl(&cfg),
        crate::app::CopyToChange::decl(&cfg),
        crate::app::FolderChange::decl(&cfg),
        crate::app::ManyChange::decl(&cfg),
        crate::app::ManyPreview::decl(&cfg),
        crate::app::UpdateState::decl(&cfg),
        crate::app::UpdateView::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated by kluis-desktop (src/bindings.rs) with ts-rs. Do not edit.\n\n",
    );
    for declaration in declarations {
        out.push_str("export ");
        out.push_str(&declaration);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    /// The committed `ui/src/bindings.ts` matches the Rust types.
    #[test]
    fn bindings_are_fresh() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/bindings.ts");
        let expected = super::typescript();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(committed == expected, "ui/src/bindings.ts is stale: run `UPDATE_BINDINGS=1 cargo test -p kluis-desktop bindings`");
    }
}
