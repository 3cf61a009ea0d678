//! A klant for tests of what keeps the plans (kluis-tray's, the Windows setup's): included by
//! path (`#[path]`) where it is used, so one copy serves several crates' tests.

use kluis_core::plan::{ClockTime, Schedule};
use kluis_desktop::{DesktopApp, PlanInput, ProfileInput};

/// Saves a klant of a server nobody answers (127.0.0.1:9) in `app`, with a daily plan at
/// 02:00 when `planned`: a plan is set, and nothing is due until the night.
pub async fn save_klant(app: &DesktopApp, planned: bool) {
    let profile = (app.accounts)
        .save_profile(ProfileInput {
            id: None,
            name: "Bakkerij".into(),
            base_url: "https://127.0.0.1:9/webservice_v2".into(),
            username: "bakker".into(),
            api_key: Some("123e4567-e89b-12d3-a456-426614174000".into()),
            password: Some("pw".into()),
            openapi_url: None,
            tags: None,
        })
        .await
        .unwrap();
    if planned {
        let schedule = Schedule::Daily {
            at: ClockTime::parse("02:00").unwrap(),
        };
        let plan = PlanInput {
            schedule,
            paused: false,
        };
        app.plans.set_plan(&profile.id, plan).unwrap();
    }
}
