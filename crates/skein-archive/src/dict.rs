//! Trained zstd dictionaries for small subagent files.
//!
//! `dict/v<N>.zdict` holds the dictionary, `dict/v<N>.json` its [`DictInfo`] (written last: a
//! dictionary without its info file is not installed). A dictionary is only installed when it
//! measurably shrinks held-out samples by at least [`TrainOptions::min_gain`]. Dictionaries are
//! never deleted or rewritten: every file that used one records its version and id, and every
//! frame carries the id, so old files keep decoding after newer dictionaries appear.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{DictRef, FORMAT, to_json};
use crate::error::{ArchiveError, IoContext, Result};
use crate::layout::{DICT_DIR, Kind, LOCK_DIR, ensure_dir, read_optional, write_file_atomic};

/// Facts about an installed dictionary (`dict/v<N>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DictInfo {
    pub format: u32,
    pub version: u32,
    pub id: u32,
    pub size: u64,
    pub trained_unix: i64,
    pub level: i32,
    pub train_samples: u64,
    pub train_bytes: u64,
    pub holdout_samples: u64,
    pub holdout_bytes: u64,
    /// Held-out samples compressed one by one without / with the dictionary.
    pub holdout_plain: u64,
    pub holdout_with_dict: u64,
}

/// Training parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainOptions {
    /// Largest decompressed subagent file used as a sample.
    pub max_sample_size: u64,
    /// At most this many samples (the most recent files).
    pub max_samples: usize,
    /// Dictionary size in bytes.
    pub dict_size: usize,
    /// Install only if held-out samples shrink by at least this fraction (0.05 = 5 %).
    pub min_gain: f64,
    /// Level used for the measurement (the archive's level).
    pub level: i32,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            max_sample_size: 256 << 10,
            max_samples: 2000,
            dict_size: 112 << 10,
            min_gain: 0.05,
            level: 3,
        }
    }
}

/// What training did.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    pub samples: usize,
    /// Measured on held-out samples: `1 - with_dict / plain` (0 if not trained).
    pub gain: f64,
    /// The installed dictionary, if it helped enough.
    pub installed: Option<DictInfo>,
    /// Why nothing was installed.
    pub skipped: Option<String>,
}

/// Files with a decompressed first ingest up to this size use the dictionary.
pub const DICT_MAX_INPUT: u64 = 1 << 20;

fn dict_dir(root: &Path) -> PathBuf {
    root.join(DICT_DIR)
}

/// Every installed dictionary's info, by version.
pub(crate) fn installed(root: &Path) -> Result<Vec<DictInfo>> {
    let dir = dict_dir(root);
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).ctx(&dir),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.ctx(&dir)?.path();
        let versioned = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('v'));
        if !versioned || !crate::layout::is_json_state(&path) {
            continue;
        }
        let bytes = fs::read(&path).ctx(&path)?;
        let info: DictInfo =
            serde_json::from_slice(&bytes).map_err(|source| ArchiveError::Json { path, source })?;
        out.push(info);
    }
    out.sort_by_key(|i| i.version);
    Ok(out)
}

/// Loads `dict/v<version>.zdict` and checks its id.
pub(crate) fn load(root: &Path, r: DictRef) -> Result<Vec<u8>> {
    let path = dict_dir(root).join(format!("v{}.zdict", r.version));
    let bytes = read_optional(&path)?
        .ok_or_else(|| ArchiveError::Dict(format!("{} is missing", path.display())))?;
    let id = zstd::zstd_safe::get_dict_id_from_dict(&bytes).map_or(0, std::num::NonZeroU32::get);
    if id != r.id {
        return Err(ArchiveError::Dict(format!(
            "{} has id {id}, expected {}",
            path.display(),
            r.id
        )));
    }
    Ok(bytes)
}

/// The newest installed dictionary.
pub(crate) fn latest(root: &Path) -> Result<Option<(DictRef, Vec<u8>)>> {
    let Some(info) = installed(root)?.pop() else {
        return Ok(None);
    };
    let r = DictRef {
        version: info.version,
        id: info.id,
    };
    Ok(Some((r, load(root, r)?)))
}

/// Finds the dictionary with zstd id `id` in `root/dict/`.
pub(crate) fn find_by_id(root: &Path, id: u32) -> Result<Option<Vec<u8>>> {
    for info in installed(root)? {
        if info.id == id {
            let r = DictRef {
                version: info.version,
                id,
            };
            return load(root, r).map(Some);
        }
    }
    Ok(None)
}

/// Trains a dictionary on the archive's small subagent files and installs it if it helps.
pub(crate) fn train(
    root: &Path,
    opts: &TrainOptions,
    lock_timeout: Duration,
    now_unix: i64,
) -> Result<TrainReport> {
    let mut candidates: Vec<(String, std::path::PathBuf, u64, Option<DictRef>)> = Vec::new();
    for ck in crate::verify::load_all_checkpoints(root)?
        .into_iter()
        .filter_map(|c| c.1.ok())
    {
        for f in ck.files() {
            if matches!(f.kind, Kind::Subagent { .. })
                && f.raw_bytes > 0
                && f.raw_bytes <= opts.max_sample_size
            {
                let path = crate::layout::resolve(root, &f.file)?;
                candidates.push((f.file.clone(), path, f.committed_len, f.dict));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0));
    candidates.truncate(opts.max_samples);
    let mut samples = Vec::with_capacity(candidates.len());
    for (_, path, len, dict) in &candidates {
        let d = dict.map(|r| load(root, r)).transpose()?;
        let mut data = Vec::new();
        crate::reader::decode_stats(path, *len, d.as_deref(), |c| data.extend_from_slice(c))
            .map_err(|reason| crate::error::corrupt(path, reason))?;
        samples.push(data);
    }
    let skipped = |why: String, n| TrainReport {
        samples: n,
        gain: 0.0,
        installed: None,
        skipped: Some(why),
    };
    if samples.len() < 20 {
        return Ok(skipped(
            format!("{} small subagent files, need at least 20", samples.len()),
            samples.len(),
        ));
    }
    let (mut train_set, mut holdout) = (Vec::new(), Vec::new());
    for (i, s) in samples.iter().enumerate() {
        let set = if i % 5 == 4 {
            &mut holdout
        } else {
            &mut train_set
        };
        set.push(s.as_slice());
    }
    let dict = match zstd::dict::from_samples(&train_set, opts.dict_size) {
        Ok(d) => d,
        Err(e) => return Ok(skipped(format!("training failed: {e}"), samples.len())),
    };
    let io_err = |e| ArchiveError::Dict(format!("measuring: {e}"));
    let mut plain = zstd::bulk::Compressor::new(opts.level).map_err(io_err)?;
    let mut with = zstd::bulk::Compressor::with_dictionary(opts.level, &dict).map_err(io_err)?;
    let (mut plain_len, mut dict_len) = (0u64, 0u64);
    for s in &holdout {
        plain_len += plain.compress(s).map_err(io_err)?.len() as u64;
        dict_len += with.compress(s).map_err(io_err)?.len() as u64;
    }
    let gain = 1.0 - dict_len as f64 / plain_len.max(1) as f64;
    if gain < opts.min_gain {
        let mut r = skipped(
            format!(
                "held-out gain {:.1} % is below the {:.1} % threshold",
                gain * 100.0,
                opts.min_gain * 100.0
            ),
            samples.len(),
        );
        r.gain = gain;
        return Ok(r);
    }
    let id = zstd::zstd_safe::get_dict_id_from_dict(&dict).map_or(0, std::num::NonZeroU32::get);
    let dir = dict_dir(root);
    ensure_dir(&dir)?;
    let _lock = crate::layout::lock(&root.join(LOCK_DIR).join("dict.lock"), lock_timeout)?;
    let existing = installed(root)?;
    if existing.iter().any(|i| i.id == id) {
        return Ok(skipped(
            format!("dictionary id {id} already installed"),
            samples.len(),
        ));
    }
    let version = existing.last().map_or(1, |i| i.version + 1);
    let info = DictInfo {
        format: FORMAT,
        version,
        id,
        size: dict.len() as u64,
        trained_unix: now_unix,
        level: opts.level,
        train_samples: train_set.len() as u64,
        train_bytes: train_set.iter().map(|s| s.len() as u64).sum(),
        holdout_samples: holdout.len() as u64,
        holdout_bytes: holdout.iter().map(|s| s.len() as u64).sum(),
        holdout_plain: plain_len,
        holdout_with_dict: dict_len,
    };
    write_file_atomic(&dir.join(format!("v{version}.zdict")), &dict)?;
    write_file_atomic(&dir.join(format!("v{version}.json")), &to_json(&info))?;
    Ok(TrainReport {
        samples: samples.len(),
        gain,
        installed: Some(info),
        skipped: None,
    })
}
