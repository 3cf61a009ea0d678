//! The window's first size: the app's own (1100 × 760), or less where the screen's usable area
//! (the monitor less its taskbar or dock) is smaller — a 1366 × 768 laptop less a 40 px taskbar
//! leaves 728 px, less than 760 and the title bar. The window manager's frame is not known
//! before the window exists, so room is kept for a usual one. And the script engine options its
//! web process starts with on Linux ([`SCRIPT_ENGINE_OPTIONS`]).

/// The JavaScriptCore options the window's web process is started with on Linux (each set to
/// `false`: its optimising compilers off; `src-tauri/src/webview_memory.rs` says why). They
/// reach it through the environment, so a program the window starts for the user (a file
/// manager) is started without them: it, or a browser it opens, should run as it always does.
pub const SCRIPT_ENGINE_OPTIONS: [&str; 2] = ["JSC_useDFGJIT", "JSC_useFTLJIT"];

/// The size the window asks for where the screen has room (logical pixels).
pub const PREFERRED: (f64, f64) = (1100.0, 760.0);
/// The smallest the window may be made; a smaller usable area gets all of it instead.
pub const SMALLEST: (f64, f64) = (720.0, 520.0);
/// Room kept for the frame the window manager adds: borders, and a title bar of up to 40 px.
const FRAME: (f64, f64) = (16.0, 48.0);

/// The first inner size and the smallest inner size for a screen whose usable area is
/// `usable` logical pixels wide and high (`None`: not known, as on some Wayland desktops).
pub fn first_size(usable: Option<(f64, f64)>) -> WindowSize {
    // An area no screen has (none, or a few pixels) is not known.
    let plausible =
        |(w, h): &(f64, f64)| w.is_finite() && h.is_finite() && *w >= 320.0 && *h >= 240.0;
    let Some((width, height)) = usable.filter(plausible) else {
        return WindowSize {
            inner: PREFERRED,
            smallest: SMALLEST,
        };
    };
    let room = ((width - FRAME.0).max(1.0), (height - FRAME.1).max(1.0));
    let inner = (PREFERRED.0.min(room.0), PREFERRED.1.min(room.1));
    WindowSize {
        inner,
        smallest: (SMALLEST.0.min(inner.0), SMALLEST.1.min(inner.1)),
    }
}

/// What [`first_size`] chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSize {
    pub inner: (f64, f64),
    pub smallest: (f64, f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1366 × 768 laptop less a 40 px taskbar: the window with its title bar fits in the
    /// 728 px left, at full width.
    #[test]
    fn a_laptop_less_its_taskbar_gets_a_window_that_fits() {
        let size = first_size(Some((1366.0, 728.0)));
        assert_eq!(size.inner, (1100.0, 680.0));
        assert!(
            size.inner.1 + FRAME.1 <= 728.0,
            "{size:?} with its title bar fits"
        );
        assert_eq!(size.smallest, SMALLEST);
    }

    /// A large screen gets the app's own size; an unknown one too.
    #[test]
    fn a_large_or_unknown_screen_gets_the_apps_own_size() {
        assert_eq!(first_size(Some((1920.0, 1040.0))).inner, PREFERRED);
        assert_eq!(first_size(None).inner, PREFERRED);
        assert_eq!(first_size(Some((f64::NAN, 900.0))).inner, PREFERRED);
    }

    /// A screen smaller than the smallest window (a scaled-up small tablet): the window is no
    /// larger than the screen, and may be made no smaller than it is.
    #[test]
    fn a_tiny_screen_gets_all_of_it_and_no_more() {
        let size = first_size(Some((700.0, 500.0)));
        assert_eq!(size.inner, (684.0, 452.0));
        assert_eq!(size.smallest, size.inner);
        let none = first_size(Some((0.0, -5.0)));
        assert_eq!(none.inner, PREFERRED, "an area no screen has is not known");
    }
}
