//! `skein usage` on a listing (no catalog): the walk and the scan overlap. Each transcript goes
//! to the workers as soon as the walk finds it; the sessions are grouped when the walk ends,
//! and each takes its files' scans in its own order (those the walk started, then the files it
//! could not start, archived ones), so the report is the one a listing followed by a scan
//! makes. The walk of a tree of 3,300 directories takes ~45 ms of CPU, which no worker waits
//! for now.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::mpsc::{self, TryRecvError};

use anyhow::{Result, anyhow};
use rustc_hash::FxHashMap;
use skein_layout::{Env, SessionFiles, discover_with};
use skein_reports::session::LoadError;
use skein_reports::usage::{ScanJob, SessionScan, UsageBuilder, UsageKind, UsageScanner};

use super::{Gathered, add_answer};
use crate::output::error_line;
use crate::report::ReportArgs;

/// A file's scan, by the job's number.
type Scanned = (usize, Result<SessionScan, LoadError>);

/// Jobs and results travel in runs of up to this many: with one message per file, a sleeping
/// thread was woken for each of 4,300 files (14 % more CPU, in context switches and lock
/// hand-overs, and no gain in wall time; measured).
const RUN: usize = 16;

/// The sessions under the report's roots (after its filters), with their scans added to a
/// builder in session order; the flag says every path could be listed.
pub(super) fn gather_listed(
    report: &ReportArgs,
    env: &Env,
    kind: UsageKind,
) -> Result<(Vec<SessionFiles>, bool, Gathered)> {
    let roots = report.roots(env)?;
    let filter = report.filter(env)?;
    let threads = skein_core::ordered::threads_or_cores(report.threads.unwrap_or(0));
    let mmap = report.mmap;
    let (jobs, to_scan) = mpsc::channel::<Vec<(usize, ScanJob)>>();
    let to_scan = Mutex::new(to_scan);
    let (scanned, results) = mpsc::channel::<Vec<Scanned>>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let scanned = scanned.clone();
            let to_scan = &to_scan;
            scope.spawn(move || scan_jobs(to_scan, &scanned, mmap));
        }
        drop(scanned);
        // `jobs` moves in: whatever this returns, the workers see the channel close and end.
        let jobs = jobs;
        let mut started = Started::default();
        // Only live sources are shown: archived ones are scanned once the sessions are known.
        let found = discover_with(&roots, &mut |source| {
            if filter.keeps_project(&source.project) && filter.keeps_file(&source.path) {
                started.start(ScanJob::of_source(source), &jobs);
            }
        });
        for e in &found.errors {
            error_line(&e.to_string());
        }
        let found_ok = found.errors.is_empty();
        let sessions = report.filtered_by(found.sessions, &filter);
        // Each session's files by job number, in scan order (the files the walk did not start
        // are started now).
        let numbers: Vec<Vec<usize>> = sessions
            .iter()
            .map(|s| {
                ScanJob::of_session(s)
                    .into_iter()
                    .map(|job| started.start(job, &jobs))
                    .collect()
            })
            .collect();
        started.flush(&jobs);
        drop(jobs);
        let gathered = assemble(report, &sessions, &numbers, kind, &results)?;
        // The jobs are done and the command ends soon after: freeing each job's path and ids
        // one by one here would add to the report's serial tail (as `usage::run` leaks its
        // result for the same reason).
        std::mem::forget((started, numbers));
        Ok((sessions, found_ok, gathered))
    })
}

/// The jobs handed to the workers, numbered, and the run being filled.
#[derive(Default)]
struct Started {
    numbers: FxHashMap<ScanJob, usize>,
    run: Vec<(usize, ScanJob)>,
}

impl Started {
    /// Starts `job` unless it was started already; its number either way.
    fn start(&mut self, job: ScanJob, jobs: &mpsc::Sender<Vec<(usize, ScanJob)>>) -> usize {
        if let Some(&n) = self.numbers.get(&job) {
            return n;
        }
        let n = self.numbers.len();
        self.numbers.insert(job.clone(), n);
        self.run.push((n, job));
        if self.run.len() == RUN {
            self.flush(jobs);
        }
        n
    }

    fn flush(&mut self, jobs: &mpsc::Sender<Vec<(usize, ScanJob)>>) {
        if !self.run.is_empty() {
            // The workers keep the receiver until the scope ends: a send cannot fail.
            let _ = jobs.send(std::mem::take(&mut self.run));
        }
    }
}

/// A worker: scans runs of jobs until the channel closes, sending its results in runs too,
/// and whatever it holds before it waits for more (so no result waits on a sleeping worker).
fn scan_jobs(
    to_scan: &Mutex<mpsc::Receiver<Vec<(usize, ScanJob)>>>,
    scanned: &mpsc::Sender<Vec<Scanned>>,
    mmap: bool,
) {
    let mut scanner = UsageScanner::new();
    let mut done: Vec<Scanned> = Vec::new();
    let send = |done: &mut Vec<Scanned>| {
        if done.is_empty() {
            return true;
        }
        scanned.send(std::mem::take(done)).is_ok()
    };
    loop {
        let next = {
            // The lock is held while waiting: one worker waits on the channel, the others on
            // the lock. A poisoned lock (a worker panicked) ends this one too.
            let Ok(receiver) = to_scan.lock() else { return };
            match receiver.try_recv() {
                Ok(run) => Some(run),
                Err(TryRecvError::Empty) => {
                    if !send(&mut done) {
                        return;
                    }
                    receiver.recv().ok()
                }
                Err(TryRecvError::Disconnected) => None,
            }
        };
        let Some(run) = next else {
            send(&mut done);
            return;
        };
        for (n, job) in run {
            done.push((n, scanner.scan_file(&job, mmap)));
        }
        if done.len() >= RUN && !send(&mut done) {
            return;
        }
    }
}

/// Each session's scan from its files' scans, added to a builder in session order; a session
/// with a file that could not be read is reported and left out, as a session scan that fails
/// on that file is.
fn assemble(
    report: &ReportArgs,
    sessions: &[SessionFiles],
    numbers: &[Vec<usize>],
    kind: UsageKind,
    results: &mpsc::Receiver<Vec<Scanned>>,
) -> Result<Gathered> {
    let bar = report.progress(sessions.len());
    let mut slots: Vec<Option<Result<SessionScan, LoadError>>> = Vec::new();
    let mut take = |n: usize, path: &std::path::Path| -> Result<Result<SessionScan, LoadError>> {
        loop {
            if let Some(r) = slots.get_mut(n).and_then(Option::take) {
                return Ok(r);
            }
            let run = results
                .recv()
                .map_err(|_| anyhow!("the scan of {} ended without a result", path.display()))?;
            for (m, scan) in run {
                if slots.len() <= m {
                    slots.resize_with(m + 1, || None);
                }
                slots[m] = Some(scan);
            }
        }
    };
    let mut builder = UsageBuilder::new();
    let mut skipped = Vec::new();
    let mut jobs_ok = true;
    let empty = BTreeMap::new();
    for (s, numbers) in sessions.iter().zip(numbers) {
        let mut scan = SessionScan::default();
        let mut failed = None;
        // `files()` is the order of `ScanJob::of_session`: the main transcript, then the agents.
        for (&n, path) in numbers.iter().zip(s.files()) {
            match take(n, path)? {
                Ok(file) if failed.is_none() => scan.append(file),
                Err(e) if failed.is_none() => failed = Some(e),
                _ => {}
            }
        }
        match failed {
            None => add_answer(
                &mut builder,
                &mut skipped,
                kind,
                s,
                (scan, Vec::new(), &empty),
            ),
            Some(e) => {
                jobs_ok = false;
                let e = anyhow::Error::from(e);
                bar.suspend(|| error_line(&crate::output::error_text(&e)));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(Gathered {
        builder,
        skipped,
        jobs_ok,
    })
}
