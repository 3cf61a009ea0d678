//! The minisign texts Tauri's updater passes around: a public key or a signature as the .pub
//! or .sig file's text, usually base64 of it once more (`tauri signer`); and the key id both
//! carry, by which a signature by another key is told before anything is downloaded.

use base64::Engine;

/// `text` as minisign's own text: base64 of it decoded, or `text` itself when it is that
/// already (a multi-line .pub/.sig, or a one-line key).
pub(crate) fn unwrapped(text: &str) -> String {
    let engine = base64::engine::general_purpose::STANDARD;
    match engine.decode(text.trim()) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(decoded) if decoded.contains("untrusted comment") => decoded,
            _ => text.to_string(),
        },
        Err(_) => text.to_string(),
    }
}

/// The key id in a minisign key or signature text: the 8 bytes after the 2-byte algorithm in
/// its base64 line (the first that is not a comment).
pub(crate) fn key_id(text: &str) -> Option<[u8; 8]> {
    let line = (text.lines()).map(str::trim).find(|l| {
        !l.is_empty() && !l.starts_with("untrusted comment:") && !l.starts_with("trusted comment:")
    })?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(line)
        .ok()?;
    bytes.get(2..10)?.try_into().ok()
}

/// The signature in a manifest's `signature` field, decoded, and its key id.
pub(crate) fn decode(signature: &str) -> Option<(minisign_verify::Signature, [u8; 8])> {
    let text = unwrapped(signature);
    let decoded = minisign_verify::Signature::decode(&text).ok()?;
    Some((decoded, key_id(&text)?))
}
