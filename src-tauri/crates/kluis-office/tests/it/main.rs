//! kluis-office's tests, in one binary (one link).

mod hub;
