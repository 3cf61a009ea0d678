//! kluis-office's tests, in one binary (one link).

mod hub;
#[allow(dead_code)] // (what kluis-desktop's and kluis-cli's tests use too)
mod test_hub;
