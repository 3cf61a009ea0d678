//! An import file's bytes as text: UTF-8 (with or without the byte-order mark spreadsheets
//! write), UTF-16 with its mark (Excel's "Unicode text"), else Windows-1252 — what Excel on a
//! Dutch Windows writes for "CSV (puntkomma gescheiden)".

use encoding_rs::{UTF_16BE, UTF_16LE, WINDOWS_1252};

/// `bytes` decoded (see the module's text); never fails: Windows-1252 maps every byte.
pub fn decode(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return String::from_utf8_lossy(rest).into_owned();
    }
    for (mark, encoding) in [(&b"\xFF\xFE"[..], UTF_16LE), (&b"\xFE\xFF"[..], UTF_16BE)] {
        if let Some(rest) = bytes.strip_prefix(mark) {
            return encoding.decode_without_bom_handling(rest).0.into_owned();
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => WINDOWS_1252
            .decode_without_bom_handling(bytes)
            .0
            .into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same header read from each way a spreadsheet writes it.
    #[test]
    fn each_encoding_reads_the_same() {
        let plain = "naam;gebruikersnaam\nCafé Brûlé;jan\n";
        let mut with_bom = b"\xEF\xBB\xBF".to_vec();
        with_bom.extend_from_slice(plain.as_bytes());
        let (cp1252, _, _) = WINDOWS_1252.encode(plain);
        let mut utf16 = b"\xFF\xFE".to_vec();
        utf16.extend(plain.encode_utf16().flat_map(u16::to_le_bytes));
        for bytes in [plain.as_bytes(), &with_bom, &cp1252, &utf16] {
            assert_eq!(decode(bytes), plain, "{bytes:?}");
        }
    }
}
