//! `kluis-tray.exe`'s own Windows resources (nothing elsewhere): its icon (Windows shows it in
//! Task Manager and among the notification area's icons in Settings), its version information
//! (the name Windows shows for it there: Kluis), and a manifest — per-monitor DPI aware, so
//! that its icon and menu are drawn sharp on a scaled display rather than stretched, and the
//! Windows versions it was made for.

const MANIFEST: &str = r#"<assembly xmlns="urn:schemas-microsoft-com:asm.v1" manifestVersion="1.0">
  <assemblyIdentity type="win32" name="Kluis.Tray" version="1.0.0.0"/>
  <trustInfo xmlns="urn:schemas-microsoft-com:asm.v3">
    <security><requestedPrivileges>
      <requestedExecutionLevel level="asInvoker" uiAccess="false"/>
    </requestedPrivileges></security>
  </trustInfo>
  <compatibility xmlns="urn:schemas-microsoft-com:compatibility.v1">
    <application>
      <!-- Windows 10 and 11 -->
      <supportedOS Id="{8e0f7a12-bfb3-4fe8-b9a5-48fd50a15a9a}"/>
    </application>
  </compatibility>
  <application xmlns="urn:schemas-microsoft-com:asm.v3">
    <windowsSettings>
      <dpiAware xmlns="http://schemas.microsoft.com/SMI/2005/WindowsSettings">true/pm</dpiAware>
      <dpiAwareness xmlns="http://schemas.microsoft.com/SMI/2016/WindowsSettings">PerMonitorV2</dpiAwareness>
    </windowsSettings>
  </application>
</assembly>
"#;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let folder = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let icon = std::path::Path::new(&folder).join("../../../icons/icon.ico");
    println!("cargo:rerun-if-changed={}", icon.display());
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    let mut resources = tauri_winres::WindowsResource::new();
    resources
        .set_icon(&icon.to_string_lossy())
        .set("FileDescription", "Kluis")
        .set("ProductName", "Kluis")
        .set("InternalName", "kluis-tray")
        .set("OriginalFilename", "kluis-tray.exe")
        .set_manifest(MANIFEST);
    resources
        .compile()
        .expect("kluis-tray.exe's icon, version information and manifest compile");
}
