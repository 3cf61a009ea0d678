//! The simulated backup job: after its "work" it calls the client's `webhook_url?id=<uuid>`.

use std::sync::Arc;

use url::{Host, Url};
use uuid::Uuid;

use crate::config::Faults;
use crate::state::{JobResult, Shared, Stats};

pub(crate) struct Job {
    /// The account (its index) that asked: only its token may redeem the result.
    pub account: usize,
    pub webhook_url: Url,
    pub file_url: Url,
}

pub(crate) async fn run_after_delay(shared: Arc<Shared>, job: Job, faults: Faults) {
    tokio::time::sleep(faults.callback_delay).await;
    crate::state::pass(&shared.callbacks_held).await;
    finish(shared, job, faults).await;
}

/// Records the result under a fresh secret id and calls the webhook, as the faults say.
pub(crate) async fn finish(shared: Arc<Shared>, job: Job, faults: Faults) {
    let id = Uuid::new_v4();
    shared.results.lock().unwrap().insert(
        id,
        JobResult {
            account: job.account,
            file_url: job.file_url,
        },
    );
    if faults.no_callback {
        return;
    }
    let url = callback_url(&job.webhook_url, id);
    let client = if is_loopback(&url) {
        &shared.loopback_callback_client
    } else {
        &shared.callback_client
    };
    let mut delivered = false;
    for attempt in 0..=faults.callback_retries {
        if attempt > 0 {
            tokio::time::sleep(faults.callback_retry_interval).await;
        }
        Stats::bump(&shared.stats.callbacks_sent);
        shared.timeline.lock().unwrap().callback();
        if let Ok(response) = client.get(url.clone()).send().await {
            if response.status().is_success() {
                delivered = true;
                break;
            }
        }
    }
    if delivered {
        for _ in 0..faults.duplicate_callbacks {
            Stats::bump(&shared.stats.callbacks_sent);
            let _ = client.get(url.clone()).send().await;
        }
    }
}

/// `webhook_url` with `id=<uuid>` appended (after `&` when it already has a query).
pub fn callback_url(webhook_url: &Url, id: Uuid) -> Url {
    let mut url = webhook_url.clone();
    url.query_pairs_mut().append_pair("id", &id.to_string());
    url
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name == "localhost",
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id is appended with `?` to a bare URL and with `&` to one that has a query.
    #[test]
    fn appends_id_to_query() {
        let id = Uuid::nil();
        let bare = callback_url(&Url::parse("https://h/cb/x").unwrap(), id);
        assert_eq!(
            bare.as_str(),
            "https://h/cb/x?id=00000000-0000-0000-0000-000000000000"
        );
        let with_query = callback_url(&Url::parse("https://h/cb?a=1").unwrap(), id);
        assert_eq!(
            with_query.as_str(),
            "https://h/cb?a=1&id=00000000-0000-0000-0000-000000000000"
        );
    }
}
