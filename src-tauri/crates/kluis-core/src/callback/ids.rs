//! The queue between a transport and its job: each distinct callback id once, and never the
//! newest dropped.
//!
//! Whoever learns a callback URL (a proxy's access log, webhook.site) can send made-up ids to
//! it, and the service calls only once. So a request with the real id is never refused (no
//! rate limit on a live path, see `listener`), and every distinct id is kept: up to
//! [`PENDING_MAX`] waiting to be redeemed — oldest first, a few at once by the job, so the real
//! one is reached after the junk before it, each a quick `/webhook` call — and only beyond that
//! the *oldest* waiting one makes room, so the id that just arrived is always redeemed. Ids are
//! kept as 16-byte UUIDs (a secret's text is made only when one is taken for redemption), so
//! even a queue full of junk costs a few megabytes: at most [`PENDING_MAX`] waiting ids and
//! [`SEEN_MAX`] remembered ones (to drop repeats).

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use uuid::Uuid;

use super::CallbackId;

/// Ids waiting to be redeemed, at most (1 MiB of UUIDs).
pub const PENDING_MAX: usize = 65_536;
/// Ids remembered to drop repeats, at most (the oldest are forgotten first).
pub const SEEN_MAX: usize = 131_072;

#[derive(Default)]
struct State {
    pending: VecDeque<Uuid>,
    seen: HashSet<Uuid>,
    seen_order: VecDeque<Uuid>,
    senders: usize,
    receiver_gone: bool,
}

struct Inner {
    state: Mutex<State>,
    arrived: Notify,
}

/// A transport's end: [`IdSender::push`] each id that arrives. Cheap to clone.
pub struct IdSender(Arc<Inner>);

/// The job's end.
pub struct IdReceiver(Arc<Inner>);

/// A new queue.
pub fn channel() -> (IdSender, IdReceiver) {
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            senders: 1,
            ..State::default()
        }),
        arrived: Notify::new(),
    });
    (IdSender(inner.clone()), IdReceiver(inner))
}

impl IdSender {
    /// Queues `id` unless it came before; returns whether it was new.
    pub fn push(&self, id: CallbackId) -> bool {
        self.push_uuid(id.0)
    }

    fn push_uuid(&self, id: Uuid) -> bool {
        let mut state = self.0.state.lock().unwrap();
        if state.receiver_gone || !state.seen.insert(id) {
            return false;
        }
        state.seen_order.push_back(id);
        if state.seen_order.len() > SEEN_MAX {
            if let Some(old) = state.seen_order.pop_front() {
                state.seen.remove(&old);
            }
        }
        if state.pending.len() >= PENDING_MAX {
            state.pending.pop_front();
        }
        state.pending.push_back(id);
        drop(state);
        self.0.arrived.notify_one();
        true
    }

    /// The job is no longer listening.
    pub fn is_closed(&self) -> bool {
        self.0.state.lock().unwrap().receiver_gone
    }
}

impl Clone for IdSender {
    fn clone(&self) -> Self {
        self.0.state.lock().unwrap().senders += 1;
        IdSender(self.0.clone())
    }
}

impl Drop for IdSender {
    fn drop(&mut self) {
        self.0.state.lock().unwrap().senders -= 1;
        self.0.arrived.notify_one();
    }
}

impl IdReceiver {
    /// The next id, oldest waiting first; `None` once every sender is gone and none waits.
    pub async fn recv(&mut self) -> Option<CallbackId> {
        loop {
            let notified = self.0.arrived.notified();
            {
                let mut state = self.0.state.lock().unwrap();
                if let Some(id) = state.pending.pop_front() {
                    return Some(CallbackId::from_uuid(id));
                }
                if state.senders == 0 {
                    return None;
                }
            }
            notified.await;
        }
    }
}

impl IdReceiver {
    /// The next id if one waits now.
    pub fn try_recv(&mut self) -> Option<CallbackId> {
        let id = self.0.state.lock().unwrap().pending.pop_front();
        id.map(CallbackId::from_uuid)
    }
}

impl Drop for IdReceiver {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap();
        state.receiver_gone = true;
        state.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> CallbackId {
        CallbackId::parse(&uuid::Uuid::new_v4().to_string()).unwrap()
    }

    /// Repeats are dropped; a flood of distinct ids never pushes out the newest one, and the
    /// queue stays bounded.
    #[tokio::test]
    async fn keeps_the_newest_and_drops_repeats() {
        let (tx, mut rx) = channel();
        let first = id();
        assert!(tx.push(first.clone()));
        assert!(!tx.push(first.clone()), "a repeat is dropped");
        for _ in 0..(PENDING_MAX + 1000) {
            tx.push_uuid(Uuid::new_v4());
        }
        let real = id();
        assert!(
            tx.push(real.clone()),
            "the newest id is taken after a flood"
        );
        drop(tx);
        // Kept as UUIDs: holding every id as a live secret would make each new one slower.
        let mut received = Vec::new();
        while let Some(got) = rx.recv().await {
            received.push(got.0);
        }
        assert_eq!(received.len(), PENDING_MAX, "bounded");
        assert_eq!(received.last(), Some(&real.0));
        assert!(!received.contains(&first.0), "the oldest made room");
    }

    /// `recv` waits for an id, and ends once every sender is gone.
    #[tokio::test]
    async fn waits_and_ends_with_the_senders() {
        let (tx, mut rx) = channel();
        let other = tx.clone();
        let real = id();
        let sent = real.clone();
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            other.push(sent);
        });
        assert_eq!(rx.recv().await, Some(real));
        drop(tx);
        assert_eq!(rx.recv().await, None);
    }
}
