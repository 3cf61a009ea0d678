//! The tray icon on Windows: a notification-area icon with its menu (tray-icon and muda, the
//! crates Tauri's own tray is made of, here without a web engine), on a thread of its own that
//! runs the Win32 message loop they need. A click on the menu sends its [`TrayAction`] to the
//! keeper, a left click on the icon opens the window, and "Pause plans" is checked as the plans
//! are each time the icon is clicked, before its menu shows (a pause set in the window or by
//! `kluis` shows too). An Explorer that restarts gets the icon again (tray-icon re-adds it).

use std::cell::RefCell;
use std::sync::Arc;

use kluis_desktop::{DesktopApp, Language, TrayAction};
use tokio::sync::mpsc::UnboundedSender;
use tray_icon::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tray_icon::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use windows_sys::Win32::System::Threading::GetCurrentThreadId;
use windows_sys::Win32::UI::WindowsAndMessaging::{
    DispatchMessageW, FindWindowW, GetMessageW, PostThreadMessageW, TranslateMessage, MSG, WM_QUIT,
};

thread_local! {
    /// The menu's entries, on the icon's thread (muda's items stay on the thread that made
    /// them), where the icon's clicks are handled too.
    static ENTRIES: RefCell<Option<Entries>> = const { RefCell::new(None) };
}

/// The menu's entries, made again as it opens: "Pause plans" checked as the plans are, each
/// text in the window's language as it is then.
#[derive(Clone)]
struct Entries {
    open: MenuItem,
    backup_all: MenuItem,
    pause: CheckMenuItem,
    quit: MenuItem,
}

impl Entries {
    fn new(paused: bool, language: Language) -> Entries {
        let item =
            |action: TrayAction| MenuItem::with_id(action.id(), action.label(language), true, None);
        let pause = TrayAction::PausePlans;
        Entries {
            open: item(TrayAction::Open),
            backup_all: item(TrayAction::BackupAll),
            pause: CheckMenuItem::with_id(pause.id(), pause.label(language), true, paused, None),
            quit: item(TrayAction::Quit),
        }
    }

    fn show(&self, paused: bool, language: Language) {
        self.pause.set_checked(paused);
        for (item, action) in [
            (&self.open, TrayAction::Open),
            (&self.backup_all, TrayAction::BackupAll),
            (&self.quit, TrayAction::Quit),
        ] {
            item.set_text(action.label(language));
        }
        self.pause.set_text(TrayAction::PausePlans.label(language));
    }
}

/// The icon in the notification area (see the module's text).
pub struct TrayIcon {
    thread_id: u32,
    thread: std::thread::JoinHandle<()>,
    shown: bool,
}

impl TrayIcon {
    /// Whether a taskbar was there to show the icon when it was put up (none without
    /// Explorer: the icon comes when Explorer does).
    pub fn shown(&self) -> bool {
        self.shown
    }

    /// Nothing to read again: the menu is brought up to date as it opens.
    pub async fn refresh(&self) {}

    /// The icon taken away (the keeper leaves): its thread's message loop ends, the icon with
    /// it.
    pub async fn remove(self) {
        // SAFETY: posting to a thread id has no memory-safety preconditions; the thread has a
        // message queue (it made a window before its id was handed out).
        unsafe { PostThreadMessageW(self.thread_id, WM_QUIT, 0, 0) };
        let thread = self.thread;
        let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    }
}

/// Puts the icon up on a thread of its own; its clicks go to `clicks`. `None` when it could
/// not be made (the keeper then runs without an icon, and says where Kluis went).
pub async fn show(clicks: UnboundedSender<TrayAction>, app: Arc<DesktopApp>) -> Option<TrayIcon> {
    let (ready, made) = tokio::sync::oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("kluis-tray-icon".into())
        .spawn(move || {
            let icon = match put_up(clicks, app) {
                Ok(icon) => icon,
                Err(e) => {
                    let _ = ready.send(Err(e));
                    return;
                }
            };
            // SAFETY: no preconditions.
            let thread_id = unsafe { GetCurrentThreadId() };
            // Up too late (the keeper stopped waiting, and said there is none): taken down at
            // once, not left in the notification area with nobody to remove it.
            if ready.send(Ok((thread_id, taskbar_present()))).is_ok() {
                run_messages();
            }
            drop(icon);
            ENTRIES.with(|entries| entries.borrow_mut().take());
        });
    let thread = match thread {
        Ok(thread) => thread,
        Err(e) => {
            tracing::warn!(%e, "no tray icon: its thread did not start");
            return None;
        }
    };
    // (Bounded: the plans do not wait for ever on a window system that does not answer.)
    let made = match tokio::time::timeout(std::time::Duration::from_secs(30), made).await {
        Ok(made) => made,
        Err(_) => {
            tracing::warn!(
                "no tray icon: the window system did not answer; Kluis runs without one"
            );
            return None;
        }
    };
    match made {
        Ok(Ok((thread_id, shown))) => {
            tracing::info!(taskbar = shown, "Kluis's icon is up");
            Some(TrayIcon {
                thread_id,
                thread,
                shown,
            })
        }
        Ok(Err(e)) => {
            tracing::warn!(%e, "no tray icon");
            None
        }
        Err(_) => None,
    }
}

/// The icon with its menu, its clicks handled (on this thread, by tray-icon's window).
fn put_up(
    clicks: UnboundedSender<TrayAction>,
    app: Arc<DesktopApp>,
) -> Result<tray_icon::TrayIcon, Box<dyn std::error::Error + Send + Sync>> {
    let entries = Entries::new(app.plans.plans_paused(), language(&app));
    let menu = Menu::with_items(&[
        &entries.open,
        &entries.backup_all,
        &entries.pause,
        &PredefinedMenuItem::separator(),
        &entries.quit,
    ])?;
    ENTRIES.with(|slot| *slot.borrow_mut() = Some(entries));
    let menu_clicks = clicks.clone();
    let menu_app = app.clone();
    MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
        let paused = menu_app.plans.plans_paused();
        if let Some(action) = TrayAction::of_menu(event.id.as_ref(), paused) {
            let _ = menu_clicks.send(action);
        }
    }));
    TrayIconEvent::set_event_handler(Some(move |event: TrayIconEvent| {
        let now = || (app.plans.plans_paused(), language(&app));
        if let Some(action) = icon_clicked(&event, now) {
            let _ = clicks.send(action);
        }
    }));
    let mut builder = TrayIconBuilder::new()
        .with_id("kluis")
        .with_tooltip("Kluis")
        .with_menu(Box::new(menu))
        .with_menu_on_left_click(false);
    if let Some(icon) = icon() {
        builder = builder.with_icon(icon);
    }
    Ok(builder.build()?)
}

/// The window's language, as the profiles file says now.
fn language(app: &DesktopApp) -> Language {
    app.settings.language()
}

/// What a click on the icon does: a left click opens the window; a right click (its menu about
/// to show) checks "Pause plans" as the plans are now and says each entry in the window's
/// language as it is now (`now`: paused, language).
fn icon_clicked(event: &TrayIconEvent, now: impl Fn() -> (bool, Language)) -> Option<TrayAction> {
    let TrayIconEvent::Click {
        button,
        button_state,
        ..
    } = event
    else {
        return None;
    };
    match (button, button_state) {
        (MouseButton::Left, MouseButtonState::Up) => Some(TrayAction::Open),
        (MouseButton::Right, MouseButtonState::Down) => {
            let (paused, language) = now();
            ENTRIES.with(|entries| {
                if let Some(entries) = entries.borrow().as_ref() {
                    entries.show(paused, language);
                }
            });
            None
        }
        _ => None,
    }
}

/// Whether the taskbar (Explorer's `Shell_TrayWnd`, where the notification area is) is there.
fn taskbar_present() -> bool {
    window_of_class("Shell_TrayWnd")
}

/// Whether a top-level window of class `class` is there.
fn window_of_class(class: &str) -> bool {
    let class: Vec<u16> = class.encode_utf16().chain([0]).collect();
    // SAFETY: a NUL-terminated class name; no window name.
    !unsafe { FindWindowW(class.as_ptr(), std::ptr::null()) }.is_null()
}

/// This thread's messages, until `WM_QUIT` (or an error) ends the loop.
fn run_messages() {
    // SAFETY: a zeroed MSG is valid; GetMessageW fills it; the loop runs on the thread that
    // owns the icon's window.
    unsafe {
        let mut message: MSG = std::mem::zeroed();
        while GetMessageW(&mut message, std::ptr::null_mut(), 0, 0) > 0 {
            TranslateMessage(&message);
            DispatchMessageW(&message);
        }
    }
}

/// The app's 32×32 icon (none when the PNG cannot be read: Windows shows a blank one).
fn icon() -> Option<tray_icon::Icon> {
    let (rgba, width, height) = crate::icon_png::rgba()?;
    tray_icon::Icon::from_rgba(rgba, width, height).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tray_icon::{Rect, TrayIconId};

    fn click(button: MouseButton, button_state: MouseButtonState) -> TrayIconEvent {
        TrayIconEvent::Click {
            id: TrayIconId::new("kluis"),
            position: Default::default(),
            rect: Rect::default(),
            button,
            button_state,
        }
    }

    /// A left click opens the window; a right click opens the menu (tray-icon's), with "Pause
    /// plans" checked as the plans are at that moment and the entries in the window's language
    /// as it is then; nothing else does anything.
    #[test]
    fn a_click_on_the_icon_opens_the_window_or_readies_the_menu() {
        let entries = Entries::new(false, Language::En);
        ENTRIES.with(|slot| *slot.borrow_mut() = Some(entries.clone()));
        let english = || (false, Language::En);
        let open = icon_clicked(&click(MouseButton::Left, MouseButtonState::Up), english);
        assert_eq!(open, Some(TrayAction::Open));
        let down = icon_clicked(&click(MouseButton::Left, MouseButtonState::Down), english);
        assert_eq!(down, None, "the window opens once, as the button comes up");

        let dutch_paused = || (true, Language::Nl);
        let menu = icon_clicked(
            &click(MouseButton::Right, MouseButtonState::Down),
            dutch_paused,
        );
        assert_eq!(menu, None);
        assert!(
            entries.pause.is_checked(),
            "paused elsewhere: checked as the menu opens"
        );
        assert_eq!(
            entries.quit.text(),
            "Kluis afsluiten",
            "Dutch chosen meanwhile"
        );
        icon_clicked(&click(MouseButton::Right, MouseButtonState::Down), english);
        assert!(
            !entries.pause.is_checked(),
            "resumed elsewhere: not checked"
        );
        assert_eq!(entries.open.text(), "Open Kluis");
        ENTRIES.with(|slot| slot.borrow_mut().take());
    }

    /// A taskbar is known by its window (Explorer's `Shell_TrayWnd`): a window of a class is
    /// found while it is there, not before (here a class of the test's own, as Wine's session
    /// may have a taskbar or not). With none, the keeper says where Kluis went instead of
    /// pointing at an icon.
    #[test]
    fn a_taskbar_is_known_by_its_window() {
        use windows_sys::Win32::UI::WindowsAndMessaging::{
            CreateWindowExW, DefWindowProcW, DestroyWindow, RegisterClassW, WNDCLASSW,
        };
        let name = format!("KluisTestTaskbar{}", std::process::id());
        assert!(!window_of_class(&name), "none before it is made");
        let class: Vec<u16> = name.encode_utf16().chain([0]).collect();
        // SAFETY: a class of a NUL-terminated name and the default window procedure; the
        // window is destroyed on this thread, which made it.
        unsafe {
            let wnd_class = WNDCLASSW {
                lpfnWndProc: Some(DefWindowProcW),
                lpszClassName: class.as_ptr(),
                ..std::mem::zeroed()
            };
            assert_ne!(RegisterClassW(&wnd_class), 0);
            let window = CreateWindowExW(
                0,
                class.as_ptr(),
                std::ptr::null(),
                0,
                0,
                0,
                0,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null(),
            );
            assert!(!window.is_null(), "{}", std::io::Error::last_os_error());
            assert!(window_of_class(&name), "found while it is there");
            DestroyWindow(window);
            assert!(!window_of_class(&name), "not once it is gone");
        }
    }
}
