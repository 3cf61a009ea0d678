//! `kluis-relay tenant …`: the operator's commands — tenants (add, list, revoke, rotate a key)
//! and their offices' PC keys (`tenant pc-key add|list|revoke`) — printed for a person, a new
//! key once (on stdout, for a script to take).

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use kluis_relay::storage::office::check_pc_name;
use kluis_relay::storage::{now_ms, Quota, Storage};

use crate::fail;

#[derive(Subcommand)]
pub enum TenantCommand {
    /// Adds a tenant and prints its key — once; only its hash is kept.
    Add {
        name: String,
        #[command(flatten)]
        quota: QuotaArgs,
    },
    /// Lists tenants with their keys, holdings and quotas.
    List {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revokes a tenant: its keys stop working at once and its inboxes and callbacks are deleted.
    Revoke { name: String },
    /// Prints a new key for a tenant; its current keys keep working for the overlap.
    Rotate {
        name: String,
        /// How long the current keys keep working, e.g. 30m, 24h, 7d, or 0 to end them now.
        #[arg(long, default_value = "24h", value_parser = parse_overlap)]
        overlap: Duration,
    },
    /// An office's PCs (the office hub): each joins with a key of its own, which can be
    /// revoked alone.
    #[command(subcommand)]
    PcKey(PcKeyCommand),
}

#[derive(Subcommand)]
pub enum PcKeyCommand {
    /// Adds PC NAME to office TENANT and prints its key — once; only its hash is kept.
    Add { tenant: String, name: String },
    /// Lists an office's PCs.
    List {
        tenant: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revokes a PC's key: it works no more, at once; the office's other PCs go on.
    Revoke { tenant: String, name: String },
}

/// A tenant's quota at `tenant add`. The defaults suit one office with hundreds of klanten:
/// an inbox lives for one backup, and a callback is about 60 bytes.
#[derive(clap::Args)]
pub struct QuotaArgs {
    /// Inboxes held at once.
    #[arg(long, default_value_t = 500)]
    pub max_inboxes: u64,
    /// Unacknowledged callbacks across its inboxes.
    #[arg(long, default_value_t = 5_000)]
    pub max_events: u64,
    /// Bytes of unacknowledged callbacks across its inboxes.
    #[arg(long, default_value_t = 8 * 1024 * 1024)]
    pub max_bytes: u64,
    /// Inbox API requests a second, per relay instance.
    #[arg(long, default_value_t = 20.0)]
    pub requests_per_sec: f64,
}

fn parse_overlap(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.split_at(text.trim_end_matches(char::is_alphabetic).len());
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration like 30m, 24h or 7d"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "" if n == 0 => 0,
        _ => return Err(format!("'{text}' is not a duration like 30m, 24h or 7d")),
    };
    Ok(Duration::from_secs(n.saturating_mul(seconds)))
}

pub async fn tenant(store: &dyn Storage, command: TenantCommand) -> ExitCode {
    let done = match command {
        TenantCommand::Add { name, quota } => {
            if let Err(why) = kluis_relay::tenants::check_name(&name) {
                return fail(why, 2);
            }
            let quota = Quota {
                max_inboxes: Some(quota.max_inboxes),
                max_events: Some(quota.max_events),
                max_bytes: Some(quota.max_bytes),
                requests_per_sec: Some(quota.requests_per_sec),
            };
            let key = kluis_relay::tenants::new_key();
            match store.add_tenant(&name, quota, &key.id, key.hash).await {
                Ok(true) => {
                    print_key(&name, &key.text);
                    Ok(())
                }
                Ok(false) => return fail(format!("there is already a tenant '{name}' (revoked ones keep their name); choose another"), 1),
                Err(e) => Err(e),
            }
        }
        TenantCommand::List { json } => store.tenants().await.map(|tenants| {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&tenants).unwrap_or_default()
                );
            } else {
                print_tenants(&tenants);
            }
        }),
        TenantCommand::Revoke { name } => match store.revoke_tenant(&name).await {
            Ok(true) => {
                println!("Revoked '{name}': its keys no longer work and its inboxes are deleted.");
                Ok(())
            }
            Ok(false) => {
                return fail(
                    format!("no live tenant '{name}' (see kluis-relay tenant list)"),
                    1,
                )
            }
            Err(e) => Err(e),
        },
        TenantCommand::PcKey(command) => {
            return match pc_key(store, command).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            }
        }
        TenantCommand::Rotate { name, overlap } => {
            let key = kluis_relay::tenants::new_key();
            let until = now_ms().saturating_add(overlap.as_millis() as i64);
            match store.rotate_key(&name, &key.id, key.hash, until).await {
                Ok(true) => {
                    print_key(&name, &key.text);
                    eprintln!(
                        "The previous key works for {} more; give the office this one before then.",
                        humantime(overlap)
                    );
                    Ok(())
                }
                Ok(false) => {
                    return fail(
                        format!("no live tenant '{name}' (see kluis-relay tenant list)"),
                        1,
                    )
                }
                Err(e) => Err(e),
            }
        }
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e, 1),
    }
}

/// `kluis-relay tenant pc-key …`.
async fn pc_key(store: &dyn Storage, command: PcKeyCommand) -> Result<(), ExitCode> {
    let failed = |e| fail(e, 1);
    match command {
        PcKeyCommand::Add { tenant, name } => {
            check_pc_name(&name).map_err(|why| fail(why, 2))?;
            let key = kluis_relay::tenants::new_key();
            match store.add_pc(&tenant, &name, &key.id, key.hash).await {
                Ok(true) => {
                    println!("{}", key.text);
                    eprintln!("This is PC '{name}''s key in office '{tenant}'. It is shown only now: give it to that PC (Kluis: Settings → Office) and do not store it here.");
                    Ok(())
                }
                Ok(false) => Err(fail(format!("no live tenant '{tenant}', or it has a PC '{name}' already (revoke it first, or choose another name)"), 1)),
                Err(e) => Err(failed(e)),
            }
        }
        PcKeyCommand::List { tenant, json } => {
            let pcs = store.pcs(&tenant).await.map_err(failed)?;
            match json {
                true => println!("{}", serde_json::to_string_pretty(&pcs).unwrap_or_default()),
                false => {
                    println!("{:<40} STATE", "PC");
                    for pc in &pcs {
                        let state = if pc.revoked_ms.is_some() { "revoked" } else { "live" };
                        println!("{:<40} {state}", pc.name);
                    }
                }
            }
            Ok(())
        }
        PcKeyCommand::Revoke { tenant, name } => match store.revoke_pc(&tenant, &name).await {
            Ok(true) => {
                println!("Revoked PC '{name}' of '{tenant}': its key no longer works (within seconds at every instance).");
                Ok(())
            }
            Ok(false) => Err(fail(format!("office '{tenant}' has no PC '{name}' with a working key (see kluis-relay tenant pc-key list {tenant})"), 1)),
            Err(e) => Err(failed(e)),
        },
    }
}

/// The key on stdout (for a script to take), the advice on stderr.
fn print_key(name: &str, key: &str) {
    println!("{key}");
    eprintln!("This is tenant '{name}''s key. It is shown only now: give it to the office (Kluis: relay secret) and do not store it here.");
}

fn humantime(d: Duration) -> String {
    match d.as_secs() {
        0 => "no time".into(),
        s if s % 86_400 == 0 => format!("{} d", s / 86_400),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s => format!("{} min", s.div_ceil(60)),
    }
}

fn print_tenants(tenants: &[kluis_relay::storage::TenantSummary]) {
    let bound = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    println!(
        "{:<24} {:<8} {:>4} {:>14} {:>16} {:>20} {:>8}",
        "TENANT", "STATE", "KEYS", "INBOXES", "CALLBACKS", "BYTES", "REQ/S"
    );
    for t in tenants {
        let state = if t.revoked_ms.is_some() {
            "revoked"
        } else {
            "live"
        };
        let name = if t.name == kluis_relay::storage::SHARED_TENANT {
            "* (shared secret)"
        } else {
            &t.name
        };
        println!(
            "{:<24} {:<8} {:>4} {:>14} {:>16} {:>20} {:>8}",
            name,
            state,
            t.live_keys,
            format!("{}/{}", t.inboxes, bound(t.quota.max_inboxes)),
            format!("{}/{}", t.events, bound(t.quota.max_events)),
            format!("{}/{}", t.bytes, bound(t.quota.max_bytes)),
            t.quota
                .requests_per_sec
                .map_or("-".into(), |r| r.to_string()),
        );
    }
}
