//! placeholder
pub struct Config {
    pub out: std::path::PathBuf,
    pub full: bool,
    pub repeats: usize,
    pub only: Vec<String>,
}
pub fn run(_c: &Config) -> anyhow::Result<()> {
    Ok(())
}
