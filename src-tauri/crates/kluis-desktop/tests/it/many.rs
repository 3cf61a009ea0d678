//! Edit many at once, against the demo's simulator: one plan, rule and tag for the dashboard's
//! selection, previewed first (what the rule would remove now counted, nothing removed), and a
//! change that is refused for one part leaving every klant as it was.

use kluis_core::plan::Schedule;
use kluis_core::retention::Retention;
use kluis_desktop::{EncryptionInput, ManyChange, PlanInput, RuleChange};

use crate::common::*;

fn change() -> ManyChange {
    ManyChange {
        plan: None,
        retention: None,
        encryption: None,
        copy_to: None,
        save_folder: None,
        add_tags: Vec::new(),
        remove_tags: Vec::new(),
    }
}

/// Every klant selected gets the plan, the rule and the tag (its other tags kept, one taken
/// off); the preview counts what the rule would remove now per klant and the change itself
/// removes nothing (the rule runs after the next save, as the one-klant form's does).
#[tokio::test(flavor = "multi_thread")]
async fn many_klanten_get_one_plan_rule_and_tag() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    let demo = app.accounts.start_demo().await.unwrap();
    let ids: Vec<String> = demo.profiles.iter().map(|p| p.id.clone()).collect();
    assert!(ids.len() >= 3, "{ids:?}");
    let saved = [saved_demo_backup(&app).await, saved_demo_backup(&app).await];
    let keep_one = Retention {
        keep_last: Some(1),
        ..Retention::default()
    };
    app.edit_many(
        &ids[..1],
        ManyChange {
            add_tags: vec!["Piet".into(), "Oud".into()],
            ..change()
        },
    )
    .await
    .unwrap();

    let wanted = ManyChange {
        plan: Some(PlanInput {
            schedule: Schedule::Daily {
                at: kluis_core::plan::ClockTime::parse("02:00").unwrap(),
            },
            paused: false,
        }),
        retention: Some(RuleChange {
            rule: Some(keep_one.clone()),
        }),
        add_tags: vec!["Jan".into()],
        remove_tags: vec!["oud".into()],
        ..change()
    };
    let preview = app.preview_many(&ids, &wanted).unwrap();
    let removes: Vec<(&str, u32)> = preview
        .iter()
        .map(|p| (p.profile_id.as_str(), p.would_remove))
        .collect();
    assert_eq!(
        removes[0],
        ("demo", 1),
        "the demo klant's older backup: {removes:?}"
    );
    assert!(removes[1..].iter().all(|(_, n)| *n == 0), "{removes:?}");

    let changed = app.edit_many(&ids, wanted).await.unwrap();
    assert_eq!(changed.len(), ids.len());
    for klant in &changed {
        assert!(
            matches!(
                klant.plan.as_ref().map(|p| &p.schedule),
                Some(Schedule::Daily { .. })
            ),
            "{}",
            klant.name
        );
        assert_eq!(klant.retention.as_ref(), Some(&keep_one), "{}", klant.name);
        assert!(
            klant.tags.contains(&"Jan".to_string()) && !klant.tags.iter().any(|t| t == "Oud"),
            "{:?}",
            klant.tags
        );
    }
    assert_eq!(changed[0].tags, ["Piet", "Jan"], "its other tag kept");
    assert!(
        saved.iter().all(|p| p.exists()),
        "the change itself removes nothing"
    );
}

/// A change refused for one of its parts — a schedule that is none, a tag that is no label,
/// a passphrase left empty, nothing chosen — changes no klant at all.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_change_changes_no_klant() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    let demo = app.accounts.start_demo().await.unwrap();
    let ids: Vec<String> = demo.profiles.iter().map(|p| p.id.clone()).collect();
    let before = app.accounts.list();
    let refused = [
        ManyChange {
            plan: Some(PlanInput {
                schedule: Schedule::Every { hours: 0 },
                paused: false,
            }),
            add_tags: vec!["Jan".into()],
            ..change()
        },
        ManyChange {
            add_tags: vec!["x".repeat(41)],
            ..change()
        },
        ManyChange {
            encryption: Some(EncryptionInput::Passphrase { passphrase: None }),
            add_tags: vec!["Jan".into()],
            ..change()
        },
        change(),
    ];
    for wanted in refused {
        let said = format!("{wanted:?}");
        let e = app.edit_many(&ids, wanted).await.unwrap_err();
        assert_eq!(e.code(), "config", "{said}: {e}");
        let after = app.accounts.list();
        assert!(
            before
                .iter()
                .zip(&after)
                .all(|(b, a)| b.tags == a.tags && b.plan == a.plan && b.encryption == a.encryption),
            "{said} changed a klant"
        );
    }
}

/// A klant's own folder: a plan runs without the office's folder once the klant has one, its
/// backups go straight into it (no dialog, no folder per klant inside); many klanten get one
/// picked in the dialog at Apply (cancelled: nobody changes); back to the office's folder is
/// refused while a plan would then have nowhere to go.
#[tokio::test(flavor = "multi_thread")]
async fn a_klant_saves_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let demo = app.accounts.start_demo().await.unwrap();
    let ids: Vec<String> = demo.profiles.iter().map(|p| p.id.clone()).collect();
    let daily = PlanInput {
        schedule: Schedule::Daily {
            at: kluis_core::plan::ClockTime::parse("02:00").unwrap(),
        },
        paused: false,
    };
    let refused = app.plans.set_plan("demo", daily.clone()).unwrap_err();
    assert_eq!(refused.code(), "config", "no folder yet: {refused}");

    let own = tempfile::tempdir().unwrap();
    app.set_dialogs(Chooses::new(own.path()));
    let view = app.plans.choose_klant_folder("demo").await.unwrap();
    assert_eq!(view.save_folder.as_deref(), own.path().to_str());
    app.plans
        .set_plan("demo", daily.clone())
        .expect("its own folder will do");
    let saved = saved_demo_backup(&app).await;
    assert_eq!(
        saved.parent(),
        Some(own.path()),
        "straight into its own folder"
    );

    let shared = tempfile::tempdir().unwrap();
    app.set_dialogs(Chooses::new(shared.path()));
    let all = ManyChange {
        save_folder: Some(kluis_desktop::FolderChange::Choose),
        ..change()
    };
    let changed = app.edit_many(&ids, all).await.unwrap();
    assert!(
        changed
            .iter()
            .all(|p| p.save_folder.as_deref() == shared.path().to_str()),
        "{changed:?}"
    );

    let office = ManyChange {
        save_folder: Some(kluis_desktop::FolderChange::Office),
        ..change()
    };
    let refused = app.edit_many(&ids, office).await.unwrap_err();
    assert_eq!(
        refused.code(),
        "config",
        "the demo klant's plan would have nowhere to go"
    );
    assert!(
        app.accounts.list().iter().all(|p| p.save_folder.is_some()),
        "nobody changed"
    );
    let refused = app.plans.clear_klant_folder("demo").unwrap_err();
    assert_eq!(refused.code(), "config");
    let cleared = app.plans.clear_klant_folder(&ids[1]).unwrap();
    assert_eq!(
        cleared.save_folder, None,
        "a klant without a running plan goes back"
    );
}
