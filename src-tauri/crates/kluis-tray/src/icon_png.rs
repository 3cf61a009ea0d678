//! The app's 32×32 icon, as the tray shows it on Linux and Windows: decoded from its PNG.

/// The icon's PNG, built into the program.
const ICON_PNG: &[u8] = include_bytes!("../../../../icons/32x32.png");

/// The icon's pixels as 8-bit RGBA rows, with its width and height (`None` when the PNG cannot
/// be read: the tray then shows its own placeholder).
pub fn rgba() -> Option<(Vec<u8>, u32, u32)> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(ICON_PNG));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().ok()?;
    let mut rgba = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut rgba).ok()?;
    if info.color_type != png::ColorType::Rgba || info.bit_depth != png::BitDepth::Eight {
        return None;
    }
    rgba.truncate(info.buffer_size());
    Some((rgba, info.width, info.height))
}

#[cfg(test)]
mod tests {
    /// The built-in icon decodes to 32×32 RGBA pixels, some of them not transparent.
    #[test]
    fn the_icon_decodes() {
        let (rgba, width, height) = super::rgba().expect("the icon's PNG is read");
        assert_eq!((width, height), (32, 32));
        assert_eq!(rgba.len(), 32 * 32 * 4);
        assert!(
            rgba.chunks_exact(4).any(|p| p[3] != 0),
            "not all transparent"
        );
    }
}
