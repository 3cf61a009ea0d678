//! Memory a Kluis process gives back while it waits: once a minute, while no backup of its
//! own runs, glibc's free heap goes back to the system (`malloc_trim`). glibc keeps what the
//! process freed for its next allocations otherwise — measured: kluis-tray held 35 MiB after a
//! batch of 200 klanten against 15 before it, and the window's own process grew by 3 MiB in
//! its first idle ten minutes of reading the dashboard once a minute
//! (`tests/bench/window-idle.sh`). On an idle heap a trim costs next to nothing; during a
//! backup it would only be undone. (It shrinks Kluis's own process only: the window's web
//! process is WebKit's, with an allocator of its own.)

use std::time::Duration;

/// How often an idle process gives its free heap back.
pub const EVERY: Duration = Duration::from_secs(60);

/// Returns the allocator's free memory to the system (glibc's `malloc_trim`; elsewhere
/// nothing: the Windows and macOS heaps have no such call, and decommit on their own terms).
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's own to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Every [`EVERY`], calls `give_back` unless `busy` says a backup runs; never returns.
pub async fn give_back_while_idle(busy: impl Fn() -> bool, give_back: impl Fn()) {
    let mut look = tokio::time::interval_at(tokio::time::Instant::now() + EVERY, EVERY);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        look.tick().await;
        if !busy() {
            give_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use tokio::time::timeout;

    use super::*;

    /// The heap is given back once a minute, and not while a backup runs.
    #[tokio::test(start_paused = true)]
    async fn gives_back_once_a_minute_while_no_backup_runs() {
        let busy = AtomicBool::new(false);
        let given = AtomicUsize::new(0);
        let given_now = || given.load(Ordering::SeqCst);
        let waiting = give_back_while_idle(
            || busy.load(Ordering::SeqCst),
            || {
                given.fetch_add(1, Ordering::SeqCst);
            },
        );
        tokio::pin!(waiting);
        assert!(timeout(EVERY - Duration::from_secs(1), &mut waiting)
            .await
            .is_err());
        assert_eq!(given_now(), 0, "not at once: the process has just started");
        assert!(timeout(Duration::from_secs(2), &mut waiting).await.is_err());
        assert_eq!(given_now(), 1, "after a minute");
        busy.store(true, Ordering::SeqCst);
        assert!(timeout(EVERY * 3, &mut waiting).await.is_err());
        assert_eq!(given_now(), 1, "not while a backup runs");
        busy.store(false, Ordering::SeqCst);
        assert!(timeout(EVERY, &mut waiting).await.is_err());
        assert_eq!(given_now(), 2, "again once it has ended");
    }
}
