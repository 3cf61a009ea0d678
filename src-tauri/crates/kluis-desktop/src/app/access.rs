//! What a klant's api key was seen to allow: each answer of the service says "allowed" for the
//! endpoints it came from, each 403 "denied"; other failures say nothing. Kept in the profile
//! for the permissions view (see [`crate::permissions`]).

use std::sync::Arc;

use kluis_core::Error;

use crate::permissions::Endpoint;
use crate::profiles::{Profile, ProfileStore};

/// Learns what klant `id`'s key may do from an outcome on some endpoints.
pub(crate) type LearnAccess = dyn Fn(&str, Result<(), &Error>, &[Endpoint]) + Send + Sync;

/// A [`LearnAccess`] on `profiles` (usable from a job's task). The profile is read once and
/// written only when something changed.
pub(crate) fn access_learner(profiles: Arc<ProfileStore>) -> Arc<LearnAccess> {
    Arc::new(
        move |id: &str, outcome: Result<(), &Error>, endpoints: &[Endpoint]| {
            let allowed = match outcome {
                Ok(()) => true,
                Err(e) if e.code() == kluis_core::Code::PermissionDenied => false,
                Err(_) => return,
            };
            let learnt = |profile: &mut Profile| {
                let (add, remove) = match allowed {
                    true => (&mut profile.allowed, &mut profile.denied),
                    false => (&mut profile.denied, &mut profile.allowed),
                };
                let mut changed = false;
                for endpoint in endpoints {
                    if remove.contains(endpoint) {
                        remove.retain(|e| e != endpoint);
                        changed = true;
                    }
                    if !add.contains(endpoint) {
                        add.push(*endpoint);
                        changed = true;
                    }
                }
                changed
            };
            let Ok(mut profile) = profiles.get(id) else {
                return;
            };
            if learnt(&mut profile) {
                let _ = profiles.update(id, |profile| {
                    learnt(profile);
                    Ok(())
                });
            }
        },
    )
}
