//! Where the telemetry lives: the one parser of every `--db` argument.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A telemetry database: a SQLite file, or a PostgreSQL server's database
/// (`postgres://user@host:port/db`, shared by many collectors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Db {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Db {
    pub fn is_postgres(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }
}

impl FromStr for Db {
    type Err = std::convert::Infallible;

    /// `postgres://` and `postgresql://` URLs name a server; anything else is
    /// a file path.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(
            if s.starts_with("postgres://") || s.starts_with("postgresql://") {
                Db::Postgres(s.to_owned())
            } else {
                Db::Sqlite(PathBuf::from(s))
            },
        )
    }
}

/// The path, or the URL without its password (it goes into logs and errors).
impl fmt::Display for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Db::Sqlite(p) => write!(f, "{}", p.display()),
            Db::Postgres(url) => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
                match rest.split_once('@') {
                    Some((user, host)) => {
                        let user = user.split_once(':').map_or(user, |(u, _)| u);
                        write!(f, "{scheme}://{user}@{host}")
                    }
                    None => f.write_str(url),
                }
            }
        }
    }
}

impl From<&Path> for Db {
    fn from(p: &Path) -> Self {
        Db::Sqlite(p.to_owned())
    }
}

impl From<PathBuf> for Db {
    fn from(p: PathBuf) -> Self {
        Db::Sqlite(p)
    }
}

impl From<&PathBuf> for Db {
    fn from(p: &PathBuf) -> Self {
        Db::Sqlite(p.clone())
    }
}

impl From<&Db> for Db {
    fn from(d: &Db) -> Self {
        d.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_servers_and_everything_else_is_a_file() {
        let pg: Db = "postgres://u:secret@127.0.0.1:5432/t".parse().unwrap();
        assert!(pg.is_postgres());
        assert_eq!(pg.to_string(), "postgres://u@127.0.0.1:5432/t");
        let pg2: Db = "postgresql://127.0.0.1/t".parse().unwrap();
        assert_eq!(pg2, Db::Postgres("postgresql://127.0.0.1/t".into()));
        let file: Db = "runs/telemetry.db".parse().unwrap();
        assert_eq!(file, Db::Sqlite("runs/telemetry.db".into()));
        assert_eq!(file.to_string(), "runs/telemetry.db");
    }
}
