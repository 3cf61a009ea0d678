// The app's command names, shared by build.rs (permissions) and lib.rs (handler).
pub const ALL: [&str; 16] = [
    "launch_info",
    "profiles",
    "save_profile",
    "forget_profile",
    "sign_in",
    "sign_out",
    "environment",
    "permissions",
    "start_backup",
    "save_backup",
    "cancel_backup",
    "history",
    "show_backup",
    "settings",
    "set_save_folder",
    "start_demo",
];
