//! Exporting testdata/ and reading the dataset back.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use skein_export::{Dataset, ExportOptions, ExportStats, Layout, Written};
use skein_layout::SessionFiles;
use skein_reports::pricing::PricingTable;

/// Every session under testdata/ (all fixture trees), in discovery order.
pub(crate) fn sessions() -> Vec<SessionFiles> {
    let root = skein_testkit::workspace_root().join("testdata");
    let found = skein_layout::discover(&[root]);
    assert!(found.sessions.len() > 5, "testdata has sessions");
    found.sessions
}

/// Exports `sessions` into `dir`.
pub(crate) fn export(
    sessions: &[SessionFiles],
    dir: &Path,
    layout: Layout,
    options: &ExportOptions<'_>,
) -> (ExportStats, Written) {
    let mut ds = Dataset::create(dir, layout).expect("create");
    let stats = skein_export::export(sessions, options, &PricingTable::embedded(), &mut ds)
        .expect("export");
    (stats, ds.commit().expect("commit"))
}

/// Every file under `dir` ending in `ext`, sorted.
pub(crate) fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The record batches of every Parquet file of `table`, with each file's path.
pub(crate) fn read_table(dir: &Path, table: &str) -> Vec<(PathBuf, RecordBatch)> {
    let mut out = Vec::new();
    for path in files(&dir.join(table), "parquet") {
        let file = File::open(&path).expect("open");
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .expect("parquet")
            .build()
            .expect("reader");
        for b in reader {
            out.push((path.clone(), b.expect("batch")));
        }
    }
    out
}
