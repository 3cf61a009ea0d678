//! What the simulator knows (accounts, limits) and which faults it shows.

use std::collections::HashSet;
use std::time::Duration;

use uuid::Uuid;

/// The endpoints an api_key may be allowed to use (`/authenticate` is always allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Environment,
    BackupOwner,
    Webhook,
}

impl Endpoint {
    pub const ALL: [Endpoint; 3] = [
        Endpoint::Environment,
        Endpoint::BackupOwner,
        Endpoint::Webhook,
    ];
}

/// One third party's key together with one klant's credentials.
#[derive(Debug, Clone)]
pub struct Account {
    pub api_key: Uuid,
    pub username: String,
    pub password: String,
    pub allowed: HashSet<Endpoint>,
}

/// The demo key: may use every endpoint Kluis needs.
pub const DEMO_API_KEY: Uuid = Uuid::from_u128(0x5d1b7c3e_0000_4000_8000_00000000de40);
/// A second demo key that may read the environment but not back up (to show a 403).
pub const RESTRICTED_API_KEY: Uuid = Uuid::from_u128(0x5d1b7c3e_0000_4000_8000_00000000de41);
pub const DEMO_USERNAME: &str = "demo";
pub const DEMO_PASSWORD: &str = "demo-password";

/// Klant `n`'s username (see [`Account::klant`]).
pub fn klant_username(n: usize) -> String {
    format!("klant-{n:03}")
}

/// Klant `n`'s password (see [`Account::klant`]): a test account's, not a secret.
pub fn klant_password(n: usize) -> String {
    format!("wachtwoord-{n:03}")
}

impl Account {
    pub fn demo() -> Account {
        Account {
            api_key: DEMO_API_KEY,
            username: DEMO_USERNAME.into(),
            password: DEMO_PASSWORD.into(),
            allowed: Endpoint::ALL.into_iter().collect(),
        }
    }

    /// Klant `n` of an office (imports and their benchmarks): username `klant-NNN`, password
    /// [`klant_password`]`(n)`, the demo key.
    pub fn klant(n: usize) -> Account {
        Account {
            username: klant_username(n),
            password: klant_password(n),
            ..Account::demo()
        }
    }

    pub fn restricted() -> Account {
        Account {
            api_key: RESTRICTED_API_KEY,
            allowed: [Endpoint::Environment].into_iter().collect(),
            ..Account::demo()
        }
    }
}

/// Fault switches. Each default is the well-behaved server.
#[derive(Debug, Clone)]
pub struct Faults {
    /// Time between the 202 and the callback (the backup's "work").
    pub callback_delay: Duration,
    /// Call the webhook (and wait for it) before answering the POST with 202.
    pub callback_before_accept: bool,
    /// Extra copies of each callback, sent after the first succeeded.
    pub duplicate_callbacks: u32,
    /// Never call back.
    pub no_callback: bool,
    /// How often a failed callback (no answer, or not 2xx) is tried again.
    pub callback_retries: u32,
    /// Wait between callback retries.
    pub callback_retry_interval: Duration,
    /// The first N calls of `GET /webhook` answer 503.
    pub webhook_failures: u32,
    /// The first N calls of `POST /backup/owner` start the backup and then answer 500 anyway.
    pub backup_failures_after_start: u32,
    /// Close the download connection after this many body bytes...
    pub cut_download_after: Option<u64>,
    /// ...for this many responses.
    pub cut_download_times: u32,
    /// Serve downloads at this many bytes per second.
    pub download_rate: Option<u64>,
    /// Answer downloads with this `Content-Disposition` instead of the normal one.
    pub content_disposition: Option<String>,
    /// Change one byte in the middle of every download (the digest no longer matches).
    pub corrupt_download: bool,
    /// Send `Repr-Digest: sha-256=…` with downloads (RFC 9530).
    pub send_digest: bool,
    /// Omit the ETag, so a cut download cannot be resumed safely.
    pub no_etag: bool,
    /// Answer a `Range` with the range even when `If-Range` names another file (a host that
    /// ignores `If-Range`): a client must see by the ETag that it is not its file.
    pub ignore_if_range: bool,
    /// Leave the ETag out of a 206 (a 200 still has it): what the range's bytes are of is not
    /// said (RFC 9110 has a 206 repeat it).
    pub no_etag_on_partial: bool,
    /// A download that is cut (`cut_download_after`) also loses its link: its resume is
    /// refused (403) until the webhook is asked again, as a signed link running out mid-way.
    pub expire_link_on_cut: bool,
    /// The download answers with this status instead of the file.
    pub download_status: Option<u16>,
    /// `/authenticate` answers with this status and an HTML page that echoes the request — its
    /// query as sent (percent-encoded), decoded, and in base64 — as some proxies' and
    /// firewalls' error pages do.
    pub echo_authenticate: Option<u16>,
    /// `GET /webhook` answers an id it does not know with this status instead of 404 (the
    /// document names none).
    pub unknown_webhook_status: u16,
    /// `/authenticate` answers only after this long (a slow service at sign-in).
    pub authenticate_delay: Duration,
    /// Callbacks wait, after their delay, until [`crate::Sim::release_callbacks`]: a test
    /// stops the client "before the callback" for sure, however slow the machine (a delay
    /// only makes it likely).
    pub hold_callbacks: bool,
    /// `/authenticate` answers only after [`crate::Sim::release_sign_ins`] (a sign-in that is
    /// surely under way while a test stops the client).
    pub hold_sign_ins: bool,
    /// Downloads are answered only after [`crate::Sim::release_downloads`] (a download that
    /// is surely still running while a test looks at what else the client does).
    pub hold_downloads: bool,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            callback_delay: Duration::from_millis(300),
            callback_before_accept: false,
            duplicate_callbacks: 0,
            no_callback: false,
            callback_retries: 3,
            callback_retry_interval: Duration::from_millis(200),
            webhook_failures: 0,
            backup_failures_after_start: 0,
            cut_download_after: None,
            cut_download_times: 0,
            download_rate: None,
            content_disposition: None,
            corrupt_download: false,
            send_digest: true,
            no_etag: false,
            ignore_if_range: false,
            no_etag_on_partial: false,
            expire_link_on_cut: false,
            download_status: None,
            echo_authenticate: None,
            unknown_webhook_status: 404,
            authenticate_delay: Duration::ZERO,
            hold_callbacks: false,
            hold_sign_ins: false,
            hold_downloads: false,
        }
    }
}

/// Everything the simulator starts with.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub accounts: Vec<Account>,
    /// How long a token stays valid (the document says 30 minutes).
    pub token_lifetime: Duration,
    /// Size of the backup file each `POST /backup/owner` produces.
    pub payload_size: u64,
    pub faults: Faults,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            accounts: vec![Account::demo(), Account::restricted()],
            token_lifetime: Duration::from_secs(30 * 60),
            payload_size: 256 * 1024,
            faults: Faults::default(),
        }
    }
}

impl SimConfig {
    /// The accounts of `api_key`, with their index (an account's identity in tokens and
    /// results).
    pub(crate) fn accounts_with_key<'a>(
        &'a self,
        api_key: &str,
    ) -> impl Iterator<Item = (usize, &'a Account)> + 'a {
        let key = Uuid::parse_str(api_key).ok();
        self.accounts
            .iter()
            .enumerate()
            .filter(move |(_, a)| Some(a.api_key) == key)
    }
}
