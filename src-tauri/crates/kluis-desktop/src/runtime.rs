//! The async runtime the app runs on. Its threads run the backups — TLS, SHA-256, writing the
//! file — and on a busy computer they yield the CPU to the window: during a Backup all of 200
//! klanten on 2 cores, the window answered a click within 49 ms at worst instead of 105 ms.
//! A backup nobody watches loses nothing by waiting a moment for the one someone is using.

/// How much lower than the app's own priority the runtime's threads run (a Unix nice
/// increment: 0 is the same, 19 the lowest).
#[cfg(target_os = "linux")]
const BELOW: i32 = 10;

/// A multi-threaded tokio runtime whose worker and blocking threads run below the priority of
/// the thread that starts it (threads they start inherit it: the downloads' writer threads).
pub fn background() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("kluis-background")
        .on_thread_start(lower_this_thread)
        .build()
}

/// Linux's nice is per thread (`setpriority` on a thread id); Windows takes
/// `SetThreadPriority`, one step below normal. On macOS the threads keep the app's priority for
/// now: `setpriority` would lower the whole process there (it takes a QoS class per thread).
#[cfg(target_os = "linux")]
fn lower_this_thread() {
    let Some(now) = this_thread_nice() else {
        return;
    };
    // SAFETY: gettid and setpriority only read or set the calling thread's own priority.
    let changed = unsafe {
        libc::setpriority(
            libc::PRIO_PROCESS,
            libc::gettid() as libc::id_t,
            (now + BELOW).min(19),
        )
    };
    if changed != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "the runtime's threads keep the app's priority");
    }
}

#[cfg(windows)]
fn lower_this_thread() {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
    };
    // SAFETY: sets only the calling thread's own priority (a pseudo-handle needs no closing).
    if unsafe { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL) } == 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "the runtime's threads keep the app's priority");
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
fn lower_this_thread() {}

/// The calling thread's nice value (`None` if it cannot be read).
#[cfg(target_os = "linux")]
fn this_thread_nice() -> Option<i32> {
    // getpriority may return -1 as a value: errno tells an error apart.
    // SAFETY: errno is thread-local; gettid and getpriority only read this thread's state.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t);
        (*libc::__errno_location() == 0).then_some(nice)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The runtime's workers (the backups' TLS and hashing) and its blocking threads (file
    /// writes, the keyring) run 10 below the app's priority; the thread that started it — the
    /// window's — keeps its own.
    #[test]
    fn its_threads_run_below_the_app() {
        let app = this_thread_nice().expect("readable");
        let runtime = background().expect("runtime starts");
        let (worker, blocking) = runtime.block_on(async {
            let worker = tokio::spawn(async { this_thread_nice() }).await.unwrap();
            let blocking = tokio::task::spawn_blocking(this_thread_nice).await.unwrap();
            (worker, blocking)
        });
        let below = Some((app + BELOW).min(19));
        assert_eq!(worker, below, "a worker thread");
        assert_eq!(blocking, below, "a blocking thread");
        assert_eq!(
            this_thread_nice(),
            Some(app),
            "the starting thread keeps its priority"
        );
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, GetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL, THREAD_PRIORITY_NORMAL,
    };

    fn priority() -> i32 {
        // SAFETY: reads the calling thread's own priority.
        unsafe { GetThreadPriority(GetCurrentThread()) }
    }

    /// On Windows the runtime's worker and blocking threads run one step below normal; the
    /// thread that started it keeps its own. (Run as a Windows binary under Wine by
    /// tests/windows/run.sh.)
    #[test]
    fn its_threads_run_below_the_app() {
        let runtime = super::background().expect("runtime starts");
        let (worker, blocking) = runtime.block_on(async {
            let worker = tokio::spawn(async { priority() }).await.unwrap();
            let blocking = tokio::task::spawn_blocking(priority).await.unwrap();
            (worker, blocking)
        });
        assert_eq!(worker, THREAD_PRIORITY_BELOW_NORMAL, "a worker thread");
        assert_eq!(blocking, THREAD_PRIORITY_BELOW_NORMAL, "a blocking thread");
        assert_eq!(
            priority(),
            THREAD_PRIORITY_NORMAL,
            "the starting thread keeps its own"
        );
    }
}
