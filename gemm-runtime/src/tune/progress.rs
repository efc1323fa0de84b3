//! The built-in progress line of a tuning run (stderr, only on a terminal), or the
//! caller's hook.

use super::options::{ProgressHook, TuneOptions, TuneProgress, TuneStage};
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Where a run's progress goes.
pub(super) struct Progress {
    on: bool,
    label: String,
    start: Instant,
    hook: Option<ProgressHook>,
}

impl Progress {
    pub(super) fn new(opts: &TuneOptions, label: String) -> Progress {
        Progress {
            on: opts.on_progress.is_none() && opts.progress && std::io::stderr().is_terminal(),
            label,
            start: Instant::now(),
            hook: opts.on_progress.clone(),
        }
    }
    pub(super) fn event(&self, p: TuneProgress) {
        if let Some(h) = &self.hook {
            (h.0)(&p);
            return;
        }
        match p.stage {
            TuneStage::Compiling => self.show(&format!("compiling {}/{}", p.done, p.total)),
            TuneStage::Timing => self.show(&format!(
                "timing {}/{} (best {})",
                p.done,
                p.total,
                match p.best_ms {
                    Some(ms) => format!("{ms:.4} ms"),
                    None => "-".into(),
                }
            )),
            TuneStage::Done => {}
        }
    }
    fn show(&self, what: &str) {
        if self.on {
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r\x1b[2Kcrossgemm: tuning {} {what} ({:.1} s)",
                self.label,
                self.start.elapsed().as_secs_f64()
            );
            let _ = e.flush();
        }
    }
    pub(super) fn done(&self) {
        if let Some(h) = &self.hook {
            (h.0)(&TuneProgress {
                stage: TuneStage::Done,
                done: 0,
                total: 0,
                best_ms: None,
            });
        }
        if self.on {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
