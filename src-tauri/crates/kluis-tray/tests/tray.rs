//! kluis-tray's keeper with its tray icon over a real (private) D-Bus session bus: the menu as a
//! tray host reads and clicks it (com.canonical.dbusmenu), a desktop with and without a tray
//! host, and leaving when nothing is left to keep; and the program itself after an upgrade. Last,
//! the Windows `kluis-tray.exe` under Wine (ignored here: tests/windows/run.sh runs it).
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kluis_desktop::{AppPaths, DesktopApp, Language, MemoryStore};
use kluis_reporting::{Alert, Notifier};
use kluis_tray::keeper::{self, Left, Looks, WindowStarter};
use tokio::sync::mpsc;
use zbus::zvariant::{OwnedValue, Value};

#[path = "../../kluis-desktop/tests/support/planned_klant.rs"]
mod planned_klant;
#[path = "common/session_bus.rs"]
mod session_bus;
use session_bus::SessionBus;

/// The desktop's notifications, as the keeper's app shows them.
struct Told(mpsc::UnboundedSender<Alert>);

impl Notifier for Told {
    fn notify<'a>(
        &'a self,
        alert: &'a Alert,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = kluis_profiles::ProfileResult<()>> + Send + 'a>,
    > {
        let _ = self.0.send(alert.clone());
        Box::pin(async { Ok(()) })
    }
}

/// A stand-in tray host: the StatusNotifierWatcher, telling which items registered.
struct Watcher(mpsc::UnboundedSender<String>);

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    fn register_status_notifier_item(&self, service: String) {
        let _ = self.0.send(service);
    }

    fn register_status_notifier_host(&self, _service: String) {}

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        Vec::new()
    }
}

/// An app on its own folder with one klant (`planned`: with a daily plan), its notifications
/// going to the returned channel.
async fn open_app(
    dir: &std::path::Path,
    planned: bool,
) -> (Arc<DesktopApp>, mpsc::UnboundedReceiver<Alert>) {
    let (tx, told) = mpsc::unbounded_channel();
    let saved = dir.join("saved");
    std::fs::create_dir_all(&saved).unwrap();
    let app = DesktopApp::builder(AppPaths::under(dir), Arc::new(MemoryStore::default()))
        .save_folder(Some(saved))
        .notifier(Arc::new(Told(tx)), Duration::ZERO)
        .open()
        .unwrap();
    planned_klant::save_klant(&app, planned).await;
    (Arc::new(app), told)
}

/// *Open Kluis*, counted instead of starting the window's program.
fn window_counter() -> (WindowStarter, mpsc::UnboundedReceiver<()>) {
    let (tx, opened) = mpsc::unbounded_channel();
    let starter: WindowStarter = Arc::new(move || {
        let _ = tx.send(());
        Ok(())
    });
    (starter, opened)
}

/// Property `name` of the menu entries `ids` of tray item `service`, as a host reads them.
async fn properties(
    bus: &zbus::Connection,
    service: &str,
    ids: Vec<i32>,
    name: &str,
) -> Vec<(i32, OwnedValue)> {
    let reply = bus
        .call_method(
            Some(service),
            "/MenuBar",
            Some("com.canonical.dbusmenu"),
            "GetGroupProperties",
            &(ids, vec![name.to_string()]),
        )
        .await
        .expect("the menu answers");
    let items: Vec<(i32, HashMap<String, OwnedValue>)> = reply.body().deserialize().unwrap();
    (items.into_iter())
        .filter_map(|(id, mut props)| Some((id, props.remove(name)?)))
        .collect()
}

/// The menu of the tray item `service`: each entry's id by its label.
async fn menu(bus: &zbus::Connection, service: &str) -> HashMap<String, i32> {
    let labels = properties(bus, service, (1..=10).collect(), "label").await;
    (labels.into_iter())
        .filter_map(|(id, label)| Some((String::try_from(label).ok()?, id)))
        .collect()
}

/// Whether the menu's entry `id` is checked (its toggle-state).
async fn checked(bus: &zbus::Connection, service: &str, id: i32) -> bool {
    let state = properties(bus, service, vec![id], "toggle-state").await;
    let (_, state) = state.into_iter().next().expect("a check entry");
    i32::try_from(state).unwrap() == 1
}

/// A StatusNotifierItem's tooltip: icon name, icon pixmaps (width, height, ARGB), title, text.
type ToolTip = (String, Vec<(i32, i32, Vec<u8>)>, String, String);

/// The tooltip's text of the tray item `service`, as a host reads it.
async fn tooltip(bus: &zbus::Connection, service: &str) -> String {
    let properties = zbus::fdo::PropertiesProxy::builder(bus)
        .destination(service.to_string())
        .unwrap()
        .path("/StatusNotifierItem")
        .unwrap()
        .build()
        .await
        .unwrap();
    let interface = zbus::names::InterfaceName::from_static_str("org.kde.StatusNotifierItem");
    let tip = (properties.get(interface.unwrap(), "ToolTip").await).expect("the item answers");
    let tip: ToolTip = tip.try_into().expect("a tooltip");
    tip.3
}

/// The menu about to open, as a host says it before showing it (the tray reads it anew).
async fn about_to_show(bus: &zbus::Connection, service: &str) {
    bus.call_method(
        Some(service),
        "/MenuBar",
        Some("com.canonical.dbusmenu"),
        "AboutToShow",
        &(0i32),
    )
    .await
    .expect("the menu answers");
}

/// A click on the menu's entry `label`, as a host sends it.
async fn click(bus: &zbus::Connection, service: &str, label: &str) {
    let id = menu(bus, service).await[label];
    bus.call_method(
        Some(service),
        "/MenuBar",
        Some("com.canonical.dbusmenu"),
        "Event",
        &(id, "clicked", Value::from(0i32), 0u32),
    )
    .await
    .expect("the click is taken");
}

/// Within a generous bound (a slow machine), never a fixed wait: what the test waits for
/// arrives as a message.
async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen"))
}

/// A data folder under `dir` whose klant has a plan, paused as a whole: `kluis-tray` keeps it
/// (a plan is set), and no backup of the klant, due at once, keeps it busy.
#[cfg(target_os = "linux")]
async fn paused_plans_under(dir: &std::path::Path) -> std::path::PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let (app, _told) = open_app(&data, true).await;
    app.plans.pause_plans().unwrap();
    data
}

/// `program` run as the `kluis-tray` of `data`, on no session bus (no tray icon on Linux), its log at
/// info on a piped stderr, its output piped, ended with the test. Not yet started.
#[cfg(target_os = "linux")]
fn tray_of(
    program: impl AsRef<std::ffi::OsStr>,
    data: &std::path::Path,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .env("KLUIS_DATA_DIR", data)
        .env("KLUIS_LOG", "kluis_tray=info")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// The log of a `kluis-tray` started by [`tray_of`] (on its piped stderr), line by line.
#[cfg(target_os = "linux")]
type Log = tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>;

/// `tray`'s log ([`Log`]).
#[cfg(target_os = "linux")]
fn log_of(tray: &mut tokio::process::Child) -> Log {
    use tokio::io::AsyncBufReadExt;
    tokio::io::BufReader::new(tray.stderr.take().unwrap()).lines()
}

/// Reads `log` until a line says `words`; fails, with what it said, if the log ends first.
#[cfg(target_os = "linux")]
async fn until_said(log: &mut Log, words: &str) {
    let mut said = Vec::new();
    while let Some(line) = log.next_line().await.unwrap() {
        if line.contains(words) {
            return;
        }
        said.push(line);
    }
    panic!("kluis-tray ended before it said {words:?}: {said:#?}");
}

/// Waits until the `kluis-tray` started as `tray` (its log at info on a piped stderr) says it
/// keeps the plans; what it says from then on is shown with a failure.
#[cfg(target_os = "linux")]
async fn keeps_the_plans(tray: &mut tokio::process::Child) {
    let mut log = log_of(tray);
    let keeping = until_said(&mut log, "kluis-tray keeps the plans");
    within("kluis-tray keeping the plans", keeping).await;
    tokio::spawn(async move {
        while let Ok(Some(line)) = log.next_line().await {
            println!("kluis-tray: {line}");
        }
    });
}

/// `kluis-tray --quit` for `data` (as its menu entry's action runs it), which succeeds.
#[cfg(target_os = "linux")]
async fn ask_to_quit(data: &std::path::Path) {
    let quit = (tray_of(env!("CARGO_BIN_EXE_kluis-tray"), data))
        .arg("--quit")
        .output()
        .await
        .unwrap();
    assert!(quit.status.success(), "--quit is taken: {quit:?}");
}

/// One test: the session bus is this process's environment.
/// 1. Nothing to keep (no plan set): the keeper leaves at once.
/// 2. No tray host (stock GNOME): the notification says where Kluis went, and the menu still
///    works for a host that comes later (here: clicked directly) — *Quit Kluis* ends it.
/// 3. A tray host: the icon registers with it; *Pause plans* pauses every plan and checks the
///    entry, *Open Kluis* starts the window, *Quit Kluis* ends the keeper.
/// 4. The session ends (its bus goes, as at a log-out): the keeper leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tray_menu_over_d_bus_with_and_without_a_tray_host() {
    let session = SessionBus::start();
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &session.address);
    let bus = zbus::Connection::session().await.unwrap();

    // 1. Nothing to keep.
    let dir = tempfile::tempdir().unwrap();
    let (app, _told) = open_app(dir.path(), false).await;
    let (window, _opened) = window_counter();
    let left = within("leaving", keeper::run(app, window, false)).await;
    assert_eq!(left, Left::NothingToKeep, "no plan set: nothing to keep");

    // 2. No tray host.
    let names = zbus::fdo::DBusProxy::new(&bus).await.unwrap();
    let mut owners = names.receive_name_owner_changed().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (app, mut told) = open_app(dir.path(), true).await;
    // (Dutch chosen in the window: the notification says it in Dutch.)
    app.settings.set_language(Language::Nl).unwrap();
    let (window, _opened) = window_counter();
    let keeper = tokio::spawn(keeper::run(app, window, true));
    let item = within("the tray item's bus name", async {
        loop {
            let change = owners.next().await.unwrap();
            let args = change.args().unwrap();
            let name = args.name().to_string();
            // (A name taken, not one let go of by the keeper of part 1.)
            if name.starts_with("org.kde.StatusNotifierItem-") && args.new_owner().is_some() {
                break name;
            }
        }
    })
    .await;
    let alert = within("the notification", told.recv()).await.unwrap();
    assert_eq!(
        alert,
        Alert::still_running_without_tray(Language::Nl),
        "without a tray host the notification says to use the applications menu"
    );
    assert_eq!(alert.title, "Kluis draait nog", "in the window's language");
    {
        use std::os::unix::fs::PermissionsExt;
        let told = std::fs::metadata(dir.path().join("still-running.told")).unwrap();
        assert_eq!(
            told.permissions().mode() & 0o077,
            0,
            "the file that remembers it was said is owner-only"
        );
    }
    click(&bus, &item, "Kluis afsluiten").await; // (its menu in Dutch too)
    let left = within("quitting", keeper).await.unwrap();
    assert_eq!(left, Left::Quit);

    // 3. A tray host.
    let (registered, mut items) = mpsc::unbounded_channel();
    let host = zbus::connection::Builder::session()
        .unwrap()
        .name("org.kde.StatusNotifierWatcher")
        .unwrap()
        .serve_at("/StatusNotifierWatcher", Watcher(registered))
        .unwrap()
        .build()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (app, mut told) = open_app(dir.path(), true).await;
    // (English as the window said it: not this machine's locale.)
    app.settings.set_language(Language::En).unwrap();
    let (window, mut opened) = window_counter();
    let looks = Looks {
        every: Duration::from_millis(100),
        ..Looks::default()
    };
    let keeper = tokio::spawn(keeper::run_looking(app.clone(), window, true, looks));
    let item = within("the item's registration", items.recv())
        .await
        .unwrap();
    let entries = menu(&bus, &item).await;
    for label in ["Open Kluis", "Backup all now", "Pause plans", "Quit Kluis"] {
        assert!(
            entries.contains_key(label),
            "the menu has {label}: {entries:?}"
        );
    }
    // (Told before the language changes below: it is said in the language of its moment.)
    let alert = within("the notification", told.recv()).await.unwrap();
    assert_eq!(
        alert,
        Alert::still_running(Language::En),
        "with a tray host: its icon"
    );
    // Dutch chosen in a window meanwhile: the menu says it as it opens next.
    let window = kluis_profiles::ProfileStore::open(AppPaths::under(dir.path()).profiles_file);
    let window = window.unwrap();
    let say = |language| {
        window.update_settings(|settings| {
            settings.language = Some(language);
            Ok(())
        })
    };
    assert_eq!(
        tooltip(&bus, &item).await,
        "Your plans run in the background."
    );
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface("org.kde.StatusNotifierItem")
        .unwrap()
        .member("NewToolTip")
        .unwrap()
        .build();
    let mut new_tips = zbus::MessageStream::for_match_rule(rule, &bus, None)
        .await
        .unwrap();
    say(Language::Nl).unwrap();
    // The tooltip follows at the keeper's next look, the menu never opened: the host is told.
    within("the tooltip told anew", new_tips.next()).await;
    assert_eq!(
        tooltip(&bus, &item).await,
        "Uw plannen lopen op de achtergrond."
    );
    about_to_show(&bus, &item).await;
    let dutch = menu(&bus, &item).await;
    for label in ["Kluis openen", "Plannen pauzeren", "Kluis afsluiten"] {
        assert!(dutch.contains_key(label), "in Dutch: {label}: {dutch:?}");
    }
    say(Language::En).unwrap();
    about_to_show(&bus, &item).await;
    assert_eq!(menu(&bus, &item).await, entries, "English again");
    assert!(!checked(&bus, &item, entries["Pause plans"]).await);

    click(&bus, &item, "Pause plans").await;
    click(&bus, &item, "Open Kluis").await;
    // The keeper takes the clicks in order: once the window is opened, the pause is done.
    within("the window opened", opened.recv()).await.unwrap();
    assert!(app.plans.plans_paused(), "Pause plans paused the plans");
    assert!(
        checked(&bus, &item, entries["Pause plans"]).await,
        "and its entry shows it"
    );

    click(&bus, &item, "Quit Kluis").await;
    assert_eq!(within("quitting", keeper).await.unwrap(), Left::Quit);

    // 4. The session ends.
    let dir = tempfile::tempdir().unwrap();
    let (app, mut told) = open_app(dir.path(), true).await;
    let (window, _opened) = window_counter();
    let look = Duration::from_millis(100);
    let keeper = tokio::spawn(keeper::run_looking(
        app,
        window,
        true,
        Looks {
            every: look,
            ..Looks::default()
        },
    ));
    // (Told once its icon is up.)
    within("the keeper's notification", told.recv())
        .await
        .unwrap();
    drop((host, bus, names, owners));
    drop(session);
    let left = within("leaving with the session", keeper).await.unwrap();
    assert_eq!(left, Left::SessionEnded, "a log-out ends the keeper");
}

/// A data folder whose plans `kluis-tray` keeps, and that program in a folder of its own
/// beside the build (so that it is linked, not copied: no file of it is open for writing while
/// another test starts a process, which would make it busy to run), with its next version —
/// a shell running `script` — ready to be renamed over it, as dpkg does: (the folder, the
/// data folder, the program, the next version).
#[cfg(debug_assertions)]
async fn upgrade_to(
    script: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = paused_plans_under(dir.path()).await;
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let program = bin.join("kluis-tray");
    std::fs::hard_link(env!("CARGO_BIN_EXE_kluis-tray"), &program).unwrap();
    let new = bin.join("kluis-tray.dpkg-new");
    std::fs::write(&new, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, data, program, new)
}

/// A package upgrade puts a new `kluis-tray` in place while it runs (as dpkg does: a new file
/// renamed over the old). At its next looks, no backup running, it leaves, and the new program
/// runs in the same process — the background right let go of first, the instance's lock kept
/// for it (named in `KLUIS_TRAY_INSTANCE_FD`: no moment without a kluis-tray, in which a
/// `--quit` would be lost), and without `--after-window` (the user saw nothing change) —
/// instead of the old code keeping the plans until log-out. (It looks every 100 ms here:
/// `KLUIS_TRAY_LOOK_EVERY_MS`, which a debug build only reads.)
#[cfg(debug_assertions)]
#[tokio::test]
async fn an_upgraded_program_runs_in_its_place() {
    // The new version: says whether the locks were free when it ran, the file of the
    // descriptor handed over, its process and flags.
    let (_dir, data, program, new) = upgrade_to(
        "for lock in tray background; do flock -n \"$KLUIS_DATA_DIR/$lock.lock\" true && echo free || echo held; done\nreadlink \"/proc/$$/fd/$KLUIS_TRAY_INSTANCE_FD\"\necho \"$$\" \"$@\"",
    )
    .await;
    let mut tray = (tray_of(&program, &data))
        .arg("--after-window")
        .env("KLUIS_TRAY_LOOK_EVERY_MS", "100")
        .spawn()
        .unwrap();
    let pid = tray.id().unwrap();
    keeps_the_plans(&mut tray).await;

    std::fs::rename(&new, &program).unwrap();
    let ran = within("the new program's end", tray.wait_with_output())
        .await
        .unwrap();
    assert!(
        ran.status.success(),
        "the new program ran and ended: {:?}",
        ran.status
    );
    let lock = std::fs::canonicalize(data.join("tray.lock")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        format!("held\nfree\n{}\n{pid}\n", lock.display()),
        "the new program ran in the same process, the instance's lock handed over and the \
         background right free, without --after-window"
    );
}

/// The whole hand-over with the real program on both sides: after the upgrade the new
/// `kluis-tray` takes up the instance it was handed (it does not leave as if another one ran)
/// and keeps the plans; `kluis-tray --quit` then ends it.
#[cfg(debug_assertions)]
#[tokio::test]
async fn the_upgraded_program_keeps_the_plans_and_quits_when_asked() {
    // The new version: the same build, behind a file of its own.
    let (_dir, data, program, new) = upgrade_to(&format!(
        "exec '{}' \"$@\"",
        env!("CARGO_BIN_EXE_kluis-tray")
    ))
    .await;
    let mut tray = (tray_of(&program, &data))
        .env("KLUIS_TRAY_LOOK_EVERY_MS", "100")
        .spawn()
        .unwrap();
    let mut log = log_of(&mut tray);
    within(
        "the old and then the new program keeping the plans",
        async {
            until_said(&mut log, "kluis-tray keeps the plans").await;
            std::fs::rename(&new, &program).unwrap();
            until_said(&mut log, "kluis-tray keeps the plans").await;
        },
    )
    .await;
    ask_to_quit(&data).await;
    let ended = within("the new program's end", tray.wait()).await.unwrap();
    assert!(ended.success(), "{ended:?}");
    assert!(
        !data.join("tray.quit").exists(),
        "the request answered is not left for the next one"
    );
}

/// `kluis-tray --quit` while kluis-tray waits for a closing window to end its work (its
/// socket is not there yet): the request is kept, and once the window lets go kluis-tray
/// leaves without starting anything. (Before, `--quit` failed, and kluis-tray then kept the
/// plans.) The test holds the background right as that window does.
#[tokio::test]
async fn a_quit_while_it_waits_for_the_window_ends_it_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let data = paused_plans_under(dir.path()).await;
    let paths = AppPaths::under(&data);
    let window = kluis_desktop::owner::BackgroundOwner::try_take(&paths)
        .unwrap()
        .expect("nobody else holds it");
    let mut tray = tray_of(env!("CARGO_BIN_EXE_kluis-tray"), &data)
        .spawn()
        .unwrap();
    let mut log = log_of(&mut tray);
    let waiting = until_said(&mut log, "waits for the window");
    within("kluis-tray waiting for the window", waiting).await;
    ask_to_quit(&data).await;
    drop(window);
    let mut said = Vec::new();
    within("kluis-tray's end", async {
        while let Some(line) = log.next_line().await.unwrap() {
            said.push(line);
        }
    })
    .await;
    let ended = within("kluis-tray's exit", tray.wait()).await.unwrap();
    assert!(ended.success(), "{ended:?}: {said:#?}");
    assert!(
        said.iter()
            .any(|l| l.contains("asked to quit before it started"))
            && !said.iter().any(|l| l.contains("keeps the plans")),
        "it started nothing: {said:#?}"
    );
}

/// A window an old `kluis-tray` started is, after an upgrade ran the new program in its place,
/// a child of the new one: when it closes, the new program waits for it, so it does not stay a
/// zombie until log-out. (A shell stands in for the old program: it starts the "window" — a
/// child that ends when the test says — then runs kluis-tray in its own place, as the old
/// program's exec does.)
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_window_started_before_an_upgrade_is_waited_for() {
    use tokio::io::AsyncBufReadExt;
    let dir = tempfile::tempdir().unwrap();
    let data = paused_plans_under(dir.path()).await;
    let closes = dir.path().join("window-closes");
    let made = std::process::Command::new("mkfifo").arg(&closes).status();
    assert!(made.unwrap().success());
    let mut tray = (tray_of("sh", &data))
        .arg("-c")
        .arg("read closed < \"$1\" & echo $!; exec \"$0\"")
        .arg(env!("CARGO_BIN_EXE_kluis-tray"))
        .arg(&closes)
        .spawn()
        .unwrap();
    let mut said = tokio::io::BufReader::new(tray.stdout.take().unwrap()).lines();
    let window: u32 = (said.next_line().await.unwrap())
        .and_then(|pid| pid.trim().parse().ok())
        .expect("the window's pid");
    keeps_the_plans(&mut tray).await;
    // The window closes.
    tokio::task::spawn_blocking(move || std::fs::write(closes, "\n").unwrap())
        .await
        .unwrap();
    let entry = std::path::PathBuf::from(format!("/proc/{window}"));
    within("the closed window waited for", async {
        while entry.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        tray.try_wait().unwrap().is_none(),
        "kluis-tray still keeps the plans"
    );
}

/// The Windows `kluis-tray.exe` (cross-built by tests/windows/build.sh) under Wine, as
/// tests/windows/run.sh runs it (KLUIS_WINE: the wine64 loader, KLUIS_WINDOWS_BIN: the folder
/// of the programs, WINEPREFIX, DISPLAY: an Xvfb): with a plan set it keeps it, listens on its
/// named pipe and puts its icon up (on its own thread's message loop); a second one leaves
/// at once; `kluis-tray.exe --quit` reaches the first over its pipe (it says nothing of a
/// request left for a kluis-tray still starting) and the first ends (which it can only once its
/// icon's message loop has ended).
/// (Its end is waited for, never its output's: a Wine service may hold a pipe open for ever.)
#[tokio::test]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn windows_kluis_tray_keeps_the_plans_and_quits_over_its_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let data = paused_plans_under(dir.path()).await;
    let var = |name: &str| {
        std::env::var_os(name)
            .unwrap_or_else(|| panic!("{name} is not set: run bash tests/windows/run.sh"))
    };
    let exe = std::path::PathBuf::from(var("KLUIS_WINDOWS_BIN")).join("kluis-tray.exe");
    var("DISPLAY"); // (the icon is a window: Wine makes it on an X display)
    let windows_data = format!("Z:{}", data.display()).replace('/', "\\");
    let tray_exe = |args: &[&str]| {
        let mut command = tray_of(var("KLUIS_WINE"), &data);
        command
            .arg(&exe)
            .args(args)
            .env("KLUIS_DATA_DIR", &windows_data)
            .env("WINEDEBUG", "-all")
            .stdout(Stdio::null());
        command
    };

    let mut first = tray_exe(&[]).spawn().unwrap();
    let mut log = log_of(&mut first);
    within(
        "kluis-tray.exe keeping the plans, listening, its icon up",
        async {
            until_said(&mut log, "kluis-tray keeps the plans").await;
            until_said(&mut log, "kluis-tray listens for windows").await;
            until_said(&mut log, "Kluis's icon is up").await;
        },
    )
    .await;
    // (What it says from now on is read, so that it never waits on a full pipe.)
    tokio::spawn(async move {
        while let Ok(Some(line)) = log.next_line().await {
            println!("kluis-tray.exe: {line}");
        }
    });

    let mut second = tray_exe(&[]).spawn().unwrap();
    let mut second_log = log_of(&mut second);
    let said = until_said(&mut second_log, "kluis-tray runs already");
    within("a second kluis-tray.exe saying one runs already", said).await;
    let ended = within("the second one's end", second.wait()).await.unwrap();
    assert!(ended.success(), "a second one leaves: {ended:?}");

    // (What --quit says goes to a file, read once it has ended.)
    let said = dir.path().join("quit.said");
    let mut quit = tray_exe(&["--quit"]);
    quit.stderr(std::fs::File::create(&said).unwrap());
    let ended = within("kluis-tray.exe --quit", quit.status())
        .await
        .unwrap();
    assert!(ended.success(), "--quit is taken: {ended:?}");
    assert_eq!(
        std::fs::read_to_string(&said).unwrap(),
        "",
        "--quit reached kluis-tray over its pipe (no request left for a starting one)"
    );
    let ended = within("the first one's end, asked over its pipe", first.wait())
        .await
        .unwrap();
    assert!(ended.success(), "{ended:?}");
}

/// The Windows `kluis-tray.exe` carries its own resources (build.rs): the version information
/// Windows names it by (Kluis), an icon, and a manifest that makes it per-monitor DPI aware.
#[test]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
fn windows_kluis_tray_exe_has_its_name_icon_and_manifest() {
    let bin = std::env::var_os("KLUIS_WINDOWS_BIN")
        .expect("KLUIS_WINDOWS_BIN is not set: run bash tests/windows/run.sh");
    let exe = std::fs::read(std::path::Path::new(&bin).join("kluis-tray.exe")).unwrap();
    let has = |needle: &[u8]| exe.windows(needle.len()).any(|w| w == needle);
    // (Version strings are UTF-16 in the resource; the manifest is UTF-8 text.)
    let utf16 =
        |text: &str| -> Vec<u8> { text.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    for (what, needle) in [
        ("the version information", utf16("VS_VERSION_INFO")),
        ("its file's name", utf16("kluis-tray.exe")),
        ("the manifest's DPI awareness", b"PerMonitorV2".to_vec()),
    ] {
        assert!(has(&needle), "kluis-tray.exe has {what}");
    }
    // Its name: the value after the key (a few bytes of padding between them).
    let key = utf16("FileDescription");
    let at = (exe.windows(key.len()))
        .position(|w| w == key)
        .expect("kluis-tray.exe has a FileDescription");
    let after = &exe[at + key.len()..at + key.len() + 24];
    let name = utf16("Kluis\0");
    assert!(
        after.windows(name.len()).any(|w| w == name),
        "kluis-tray.exe's FileDescription is Kluis"
    );
    // The icon: each image of icons/icon.ico is a resource of its own, copied as it is (the
    // first image's directory entry: its size at byte 6 + 8, its offset at 6 + 12). (Its 16-px
    // image is no file of its own, so not the PNG the tray icon draws.)
    let ico_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../icons/icon.ico");
    let ico = std::fs::read(ico_file).unwrap();
    let word = |at: usize| u32::from_le_bytes(ico[at..at + 4].try_into().unwrap()) as usize;
    let (size, offset) = (word(6 + 8), word(6 + 12));
    assert!(
        has(&ico[offset..offset + size]),
        "kluis-tray.exe has the icon's first image"
    );
}
