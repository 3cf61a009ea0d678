//! Secrets compared without an early exit: shared by the tenants, the stores and the server,
//! and a leaf that imports none of them.

/// Compares secrets without an early exit that would tell an attacker how much matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
