// The app's commands, named once. Each is a `#[tauri::command]` in `commands.rs` that
// delegates to the desktop crate in one line; from this list come the handler
// (`commands::handler`), the app manifest and the main window's grant (both written by
// build.rs) and `ALL`, by which the tests check that the UI's `api.ts` calls exactly these.
// Adding a command: its method, its `#[tauri::command]`, its name here, and `api.ts`'s call,
// which the tests ask for.

/// Calls macro `$then` with every command's name: `$then![launch_info, profiles, …]`.
#[macro_export]
macro_rules! with_commands {
    ($then:ident) => {
        $then![
            launch_info,
            profiles,
            save_profile,
            forget_profile,
            choose_profile_ca,
            clear_profile_ca,
            sign_in,
            sign_out,
            environment,
            permissions,
            start_backup,
            save_backup,
            cancel_backup,
            history,
            show_backup,
            backup_copies,
            backup_contents,
            restore_backup,
            test_restore,
            settings,
            choose_save_folder,
            clear_save_folder,
            choose_tunnel_program,
            set_callback,
            test_callback,
            resume_backups,
            start_demo,
            open_demo,
            set_plan,
            watch_planned,
            backup_all,
            set_monitor,
            test_monitor,
            cancel_all,
            set_unattended_at_once,
            dashboard,
            set_language,
            set_notify_desktop,
            test_notification,
            tray_action,
            start_at_login,
            set_start_at_login,
            set_file_name_template,
            office_membership,
            join_office,
            leave_office,
            invite_office_pc,
            office_view,
            mail,
            set_mail,
            remove_mail,
            test_mail,
            set_retention,
            preview_retention,
            verify_backups,
            export_report,
            make_recovery_kit,
            join_recovery_kit,
            find_copies,
            restore_found,
            cancel_restore_found,
            carry_on,
            close_recovery,
            set_bandwidth,
            set_min_free,
            add_copy_folder,
            add_copy_bucket,
            sftp_host_key,
            add_copy_sftp,
            set_copy_target_rule,
            test_copy_target,
            remove_copy_target,
            set_copy_to,
            set_verify_monthly,
            set_restore_test_monthly,
            set_encryption,
            open_import,
            import_column,
            import_defaults,
            import_vault,
            run_import,
            cancel_import,
            close_import,
            export_klanten,
            preview_many,
            edit_many,
            choose_klant_folder,
            clear_klant_folder,
            update_view,
            look_for_update,
            install_update,
            set_install_updates,
        ]
    };
}

/// The names as text.
macro_rules! names {
    ($($command:ident),* $(,)?) => {
        [$(stringify!($command)),*]
    };
}

/// Every command's name.
pub const ALL: &[&str] = &with_commands!(names);
