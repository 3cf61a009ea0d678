//! Stopping the CLI while a backup runs.
//!
//! - Ctrl-C during `backup` is the user's "no": the job is cancelled — marked so in the
//!   history, its part file removed (exit 130).
//! - SIGTERM is the machine's "not now" (a scheduler's time limit, a shutdown): a job whose
//!   callback can still be collected stays journalled for `kluis resume` (exit 75); one whose
//!   callback address dies with the process is cancelled.
//! - During `resume`, both signals only stop: the jobs stay for the next resume.
//!
//! On Windows, Ctrl-C is the user's "no" as above; Ctrl-Break, closing the console window, logging
//! off and shutting down are the machine's "not now", as SIGTERM. (Windows ends the process a
//! few seconds after the console closes; stopping a job takes milliseconds.)

use std::future::Future;

use kluis_core::{Engine, Error, Result};
use tokio::sync::Notify;
use uuid::Uuid;

pub enum Signal {
    Interrupt,
    Terminate,
}

/// The next Ctrl-C, or SIGTERM (on Windows: Ctrl-Break, the console closed, log-off or
/// shutdown).
pub async fn requested() -> Signal {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => Signal::Interrupt,
                _ = term.recv() => Signal::Terminate,
            };
        }
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_close, ctrl_logoff, ctrl_shutdown};
        if let (Ok(mut brk), Ok(mut close), Ok(mut logoff), Ok(mut shutdown)) =
            (ctrl_break(), ctrl_close(), ctrl_logoff(), ctrl_shutdown())
        {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => Signal::Interrupt,
                _ = brk.recv() => Signal::Terminate,
                _ = close.recv() => Signal::Terminate,
                _ = logoff.recv() => Signal::Terminate,
                _ = shutdown.recv() => Signal::Terminate,
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    Signal::Interrupt
}

/// The next Ctrl-C or SIGTERM as [`requested`] awaits it, but caught from the moment this
/// returns (on Unix): a signal that comes before the future is first polled is not missed
/// (and does not end the process).
pub fn caught() -> std::pin::Pin<Box<dyn Future<Output = Signal> + Send>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut interrupt), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            return Box::pin(async move {
                tokio::select! {
                    _ = interrupt.recv() => Signal::Interrupt,
                    _ = term.recv() => Signal::Terminate,
                }
            });
        }
    }
    Box::pin(requested())
}

/// Runs `backup` (job `id` in `engine`, which ends as cancelled when `cancel` is notified)
/// until it ends or a signal comes, and settles the job's fate then.
pub async fn backup<T>(
    engine: &Engine,
    id: Uuid,
    cancel: &Notify,
    job: impl Future<Output = Result<T>>,
) -> Result<T> {
    let mut job = Box::pin(job);
    let signal = tokio::select! {
        biased;
        outcome = &mut job => return outcome,
        signal = requested() => signal,
    };
    match signal {
        // The job ends itself as cancelled: recorded, part file removed, relay inbox deleted.
        Signal::Interrupt => {
            cancel.notify_one();
            job.await
        }
        Signal::Terminate => {
            drop(job);
            engine.stop(id).await; // its part file is gone and its claim released
            let kept = engine
                .history()
                .get(id)?
                .is_some_and(|entry| !entry.reached().is_final());
            Err(if kept {
                Error::Interrupted
            } else {
                Error::Cancelled
            })
        }
    }
}

/// Runs `resume` until it ends or a signal comes; the jobs stay journalled either way.
pub async fn resume<T>(engine: &Engine, work: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::select! {
        biased;
        outcome = work => outcome,
        _ = requested() => {
            engine.shutdown().await;
            Err(Error::Interrupted)
        }
    }
}
