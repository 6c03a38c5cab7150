//! The schema migrations, embedded in the binary as `sqlx::migrate!` would
//! embed them, without its proc-macro: that macro builds a second copy of
//! sqlx and of SQLite's C source for the host, a sizeable share of every
//! first build. Each file is read and named exactly as sqlx reads a
//! migrations directory, so versions, descriptions and checksums match what
//! databases already migrated hold (`tests::the_embedded_migrations_are_the_directories`).

use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

/// One migration file: its name in the directory and its SQL.
type File = (&'static str, &'static str);

macro_rules! files {
    ($dir:literal: $($name:literal),+ $(,)?) => {
        &[$(($name, include_str!(concat!("../", $dir, "/", $name)))),+]
    };
}

/// `store/migrations`, in order.
pub(crate) const SQLITE: &[File] = files!("migrations":
    "0001_telemetry.sql",
    "0002_hops_per_probe.sql",
    "0003_spans.sql",
    "0005_store_mode.sql",
    "0006_run_keys.sql",
    "0008_collector_rejects.sql",
    "0009_run_topology.sql",
    "0010_port_counters.sql",
);

/// `store/migrations-postgres`, in order.
pub(crate) const POSTGRES: &[File] = files!("migrations-postgres":
    "0001_telemetry.sql",
    "0002_collector_rejects.sql",
    "0003_run_topology.sql",
    "0004_port_counters.sql",
);

/// The migrator of one directory's files.
pub(crate) async fn migrator(files: &'static [File]) -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(files)).await
}

#[derive(Debug)]
struct Embedded(&'static [File]);

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, sqlx::error::BoxDynError>> + Send>>
    {
        let migrations = self
            .0
            .iter()
            .map(|&(name, sql)| migration(name, sql))
            .collect();
        Box::pin(std::future::ready(migrations))
    }
}

/// `<VERSION>_<DESCRIPTION>.sql` as sqlx's directory source reads it.
fn migration(name: &str, sql: &'static str) -> Result<Migration, sqlx::error::BoxDynError> {
    let (version, rest) = name
        .split_once('_')
        .ok_or_else(|| format!("migration {name}: no `_` after the version"))?;
    let version = version
        .parse()
        .map_err(|_| format!("migration {name}: the version is not an integer"))?;
    let kind = MigrationType::from_filename(rest);
    let description = rest.trim_end_matches(kind.suffix()).replace('_', " ");
    let no_tx = sql.starts_with("-- no-transaction");
    Ok(Migration::new(
        version,
        Cow::Owned(description),
        kind,
        Cow::Borrowed(sql),
        no_tx,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every file of each directory is embedded, in order, and read the
    /// same as sqlx reads the directory (the same checksums: a database
    /// migrated by an older build stays valid).
    #[tokio::test]
    async fn the_embedded_migrations_are_the_directories() {
        for (dir, files) in [("migrations", SQLITE), ("migrations-postgres", POSTGRES)] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let on_disk = Migrator::new(path).await.unwrap();
            let embedded = migrator(files).await.unwrap();
            let key = |m: &Migration| {
                let Migration {
                    version,
                    description,
                    migration_type,
                    sql,
                    checksum,
                    no_tx,
                } = m;
                (
                    *version,
                    description.clone(),
                    *migration_type,
                    sql.clone(),
                    checksum.clone(),
                    *no_tx,
                )
            };
            let on_disk: Vec<_> = on_disk.iter().map(key).collect();
            let embedded: Vec<_> = embedded.iter().map(key).collect();
            assert_eq!(
                embedded, on_disk,
                "{dir}: list its files in `migrations.rs`"
            );
        }
    }
}
