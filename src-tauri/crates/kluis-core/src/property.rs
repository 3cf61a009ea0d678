//! How Kluis's property tests ("fuzz") run: [`run`] a property on generated inputs, with no
//! file of past failures (a failure prints its input). The quick run of every `cargo test`
//! takes [`QUICK`] cases, the ignored long run [`LONG`] (`cargo test --release … -- --ignored
//! fuzz`). Shared by the crates whose parsers see outside input (built with the
//! `property-tests` feature, for their tests only).

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestRunner};

/// Cases of the quick run.
pub const QUICK: u32 = 512;
/// Cases of the long run.
pub const LONG: u32 = 100_000;

/// `property` checked on `cases` values of `strategy`; it panics on a failure.
pub fn run<S: Strategy>(cases: u32, strategy: S, property: impl Fn(S::Value)) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |value| {
            property(value);
            Ok(())
        })
        .unwrap();
}
