//! Font set-up for plotters, shared by the heatmaps and the charts.
//!
//! plotters' default text backend needs fontconfig and FreeType at build time;
//! its `ab_glyph` backend needs only a TrueType file, registered once per
//! process. We use the system's DejaVu Sans (Debian `fonts-dejavu-core`)
//! rather than shipping a font.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where a sans-serif TrueType font is looked for, first match wins.
const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// The family name charts must use in their text styles.
pub const FONT_FAMILY: &str = "sans-serif";

#[derive(Debug, Clone, thiserror::Error)]
pub enum FontError {
    #[error("no TrueType font found (looked at {0}); install Debian's fonts-dejavu-core or set INTPATH_FONT")]
    NotFound(String),
    #[error("{0}: cannot use font: {1}")]
    Unusable(PathBuf, String),
}

/// Registers the font under [`FONT_FAMILY`]; later calls return the first outcome.
///
/// `INTPATH_FONT` names a font file to use instead of the system one.
pub fn register_font() -> Result<(), FontError> {
    static DONE: OnceLock<Result<(), FontError>> = OnceLock::new();
    DONE.get_or_init(|| {
        let path = find_font()?;
        let bytes =
            std::fs::read(&path).map_err(|e| FontError::Unusable(path.clone(), e.to_string()))?;
        // plotters keeps a reference for the life of the process.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font(FONT_FAMILY, plotters::style::FontStyle::Normal, bytes)
            .map_err(|_| FontError::Unusable(path, "not a TrueType font".into()))
    })
    .clone()
}

fn find_font() -> Result<PathBuf, FontError> {
    if let Some(p) = std::env::var_os("INTPATH_FONT") {
        return Ok(PathBuf::from(p));
    }
    FONT_CANDIDATES
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| FontError::NotFound(FONT_CANDIDATES.join(", ")))
}
