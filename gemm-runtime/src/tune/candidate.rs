//! Running one candidate on the tuner's operands and judging its whole output.
//!
//! Each candidate runs into a NaN-filled buffer of its own (nothing another candidate
//! left can pass for its result, and an element it never writes fails). Then, by the
//! [`Plan`]'s mode:
//!
//! - **full**: the whole output is copied back and every element checked against the
//!   host reference;
//! - **sampled**: the sampled elements are gathered on the device and checked against
//!   the host reference. The first candidate that passes (and has no NaN anywhere)
//!   becomes the *trusted* result; every later one is compared with it over the whole
//!   output on the device, with a tolerance for two summation orders
//!   ([`super::verify::Filter`]). Elements where they disagree are settled by the host
//!   reference (up to [`Plan::arbitration_budget`] of them): a candidate wrong there
//!   fails; a trusted result wrong there is demoted (its config fails) and the candidate
//!   that showed it takes its place.
//!
//! Kernels are deterministic, so a trusted result is its kernel's output after timing
//! too; a test's injected fault is re-applied after timing, as a deterministic bug
//! would recur.

use super::compare::{self, Reader};
use super::options::Inject;
use super::verify::{Mode, Plan};
use crate::call::Call;
use crate::device::RawBuffer;
use crate::element::{decode, encode};
use crate::error::{GemmError, Result};
use crate::measure;
use crate::reference;
use gemm_core::{Machine, TileConfig};
use std::any::Any;

/// A fault a test injects into a candidate: into its output after it runs, or into its
/// launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    None,
    /// Its launch runs out of device memory ([`crate::device::fail_next_allocations`]), as
    /// one whose split-K workspace the device cannot grow would.
    OutOfMemory,
    /// Every byte set to this.
    Fill(u8),
    /// One block tile of the config in the middle of product `.0` of the output, each
    /// element + 1.
    Tile(usize),
    /// One element in the middle of the output, + 1.
    Element,
}

/// What checking one candidate showed.
pub(crate) enum Verdict {
    /// Its output is right; `demoted` names the trusted candidate it showed to be wrong,
    /// with why.
    Pass { demoted: Option<(usize, String)> },
    /// Its output is wrong, and why.
    Wrong(String),
    /// It could not run: the config's fault, unless the device was out of memory
    /// ([`GemmError::is_out_of_memory`]: after the staging scratch was freed), which is
    /// the device's state at the time.
    LaunchFailed(GemmError),
}

/// Candidates' outputs and the trusted one, for one plan.
pub(crate) struct Checker {
    pub(crate) plan: Plan,
    reader: Option<Reader>,
    /// `[candidate, trusted]` (the second in sampled mode only).
    bufs: Vec<RawBuffer>,
    trusted: Option<(usize, TileConfig)>,
    /// The last candidate passed and is to become the trusted one ([`Checker::promote`]).
    pending: bool,
    /// What [`Checker::run`] sizes launches for, when not the device itself
    /// ([`Checker::launched_for`]).
    machine: Option<Machine>,
}

impl Checker {
    /// The tuner's operands for `call` and its reference ([`Plan::new`]), and the output
    /// buffers (a second one for the trusted result in sampled mode, if `trust`). `Err`
    /// when the device or host cannot hold them.
    pub(crate) fn new(call: &Call<'_, '_>, inject: &Inject, trust: bool) -> Result<Checker> {
        let plan = Plan::new(call, inject, trust)?;
        let dev = call.device();
        // Every product of a batch is written; the first is checked.
        let bytes = plan.m * plan.n * call.problem.batch * plan.ir.out_dtype.size() as usize;
        let outputs = if plan.mode == Mode::Sampled && trust { 2 } else { 1 };
        let bufs = (0..outputs)
            .map(|_| RawBuffer::new(dev, bytes))
            .collect::<Result<Vec<_>>>()?;
        let reader = (plan.mode == Mode::Sampled).then(|| Reader::new(dev, plan.ir.out_dtype));
        Ok(Checker {
            plan,
            reader,
            bufs,
            trusted: None,
            pending: false,
            machine: None,
        })
    }

    /// Checks launched with the grid of `machine` (a persistent kernel's grid smaller than
    /// the device's, so that its blocks loop over a small problem's tiles as over a large
    /// one's: [`super::variant::check_problem`]).
    pub(crate) fn launched_for(self, machine: Machine) -> Checker {
        Checker {
            machine: Some(machine),
            ..self
        }
    }

    /// How candidates are checked, in a few words (for the report).
    pub(crate) fn describe(&self) -> String {
        let p = &self.plan;
        match p.mode {
            Mode::Full => format!(
                "every element of the {}x{} output{} against the host reference, on the tuner's operands",
                p.m,
                p.n,
                p.checked_products()
            ),
            Mode::Sampled => format!(
                "{} sampled elements{} against the host reference and the whole {}x{} output{} against the first verified candidate's{}, on the tuner's operands",
                p.points.len(),
                p.checked_products(),
                p.m,
                p.n,
                if p.batch > 1 { " of every product" } else { "" },
                match self.reader.as_ref().and_then(|r| r.fallback.as_deref()) {
                    Some(why) => format!(" (copied to the host: the comparison kernel failed to build: {why})"),
                    None => " (on the device)".to_string(),
                }
            ),
        }
    }

    /// Runs `f` with the call of the plan's operands writing the candidate buffer.
    fn with_call<R>(&self, f: impl FnOnce(&Call<'_, '_>, &RawBuffer) -> R) -> Result<R> {
        let args = self.plan.ops.args();
        let call = self.plan.ops.call(self.plan.spec, &args, &self.bufs[0])?;
        Ok(f(&call, &self.bufs[0]))
    }

    /// Runs `cfg` (compiled as `kern`) once into the poisoned candidate buffer, applies
    /// `fault`, and judges the output. `Err` is for failures that are not the
    /// candidate's (the device, the host's memory).
    pub(crate) fn run(&mut self, cfg: &TileConfig, kern: &(dyn Any + Send + Sync), fault: Fault) -> Result<Verdict> {
        self.pending = false;
        let cand = &self.bufs[0];
        cand.fill(0xFF)?;
        let machine = self.machine;
        let ran = self.with_call(|call, out| {
            let dims = cfg.launch(call.ir(), call.problem, machine.unwrap_or_else(|| call.machine()));
            let dev = call.device();
            if fault == Fault::OutOfMemory {
                crate::device::fail_next_allocations(1);
            }
            // As a call launches (a split-K workspace that does not fit frees the staging
            // scratch first). Errors surface at the launch or at the first wait after it.
            dev.launch(kern, dims, &call.kernel_args(cfg, out))
                .and_then(|_| dev.synchronize())
        })?;
        if let Err(e) = ran {
            return Ok(Verdict::LaunchFailed(e));
        }
        self.apply(fault, cfg)?;
        let p = &self.plan;
        if p.mode == Mode::Full {
            let bytes = compare::download(&self.bufs[0])?;
            return Ok(match p.check_full(&bytes) {
                Ok(()) => Verdict::Pass { demoted: None },
                Err(why) => Verdict::Wrong(why),
            });
        }
        let reader = self.reader.as_ref().expect("sampled mode has a reader");
        let vals = reader.values_at(&self.bufs[0], &p.point_indices())?;
        if let Err(why) = p.check_points(&vals) {
            return Ok(Verdict::Wrong(why));
        }
        // Every product of a batch: no NaN anywhere, and agreement with the trusted output.
        let n = p.product_len() * p.batch;
        let Some((t, tcfg)) = self.trusted.filter(|_| self.bufs.len() > 1) else {
            // The first to pass becomes the trusted result: it must have no NaN anywhere
            // (an element never written, outside the sample).
            let d = reader.compare(&self.bufs[0], &self.bufs[0], n, p.filter)?;
            if d.count > 0 {
                let (b, (i, j)) = (d.first[0].0 / p.product_len(), p.coords(d.first[0].0 % p.product_len()));
                let product = if p.batch > 1 {
                    format!(" of product {b}")
                } else {
                    String::new()
                };
                return Ok(Verdict::Wrong(format!(
                    "{} elements of the output are NaN (never written?), first at ({i},{j}){product} (whole-output scan)",
                    d.count
                )));
            }
            self.pending = true;
            return Ok(Verdict::Pass { demoted: None });
        };
        let d = reader.compare(&self.bufs[0], &self.bufs[1], n, p.filter)?;
        if d.count == 0 {
            return Ok(Verdict::Pass { demoted: None });
        }
        Ok(self.arbitrate(&d, cfg, t, &tcfg))
    }

    /// Settles the disputed elements of `d` (this candidate `cfg` against trusted
    /// candidate `t`, `tcfg`) with the host reference.
    fn arbitrate(&mut self, d: &compare::Disagreement, cfg: &TileConfig, t: usize, tcfg: &TileConfig) -> Verdict {
        let p = &self.plan;
        let budget = p.arbitration_budget();
        let stride = d.first.len().div_ceil(budget).max(1);
        let picked: Vec<&(usize, f32, f32)> = d.first.iter().step_by(stride).collect();
        let mut stack = Vec::new();
        let (mut bad_c, mut bad_t) = (Vec::new(), Vec::new());
        // Each disputed element against its own product's reference.
        let mut products: Vec<usize> = picked.iter().map(|x| x.0 / p.product_len()).collect();
        products.dedup();
        for b in products {
            let here: Vec<&(usize, f32, f32)> = picked.iter().copied().filter(|x| x.0 / p.product_len() == b).collect();
            let points: Vec<(usize, usize)> = here.iter().map(|x| p.coords(x.0 % p.product_len())).collect();
            let host = p.host(b);
            let refs = reference::gemm_sampled(p.ir, &host, p.k, &points);
            for ((&&(_, c, tv), &(i, j)), r) in here.iter().zip(&points).zip(&refs) {
                if let Err(why) = p.element_ok(&host, r, c, i, j, &mut stack) {
                    bad_c.push(p.in_product(b, why));
                }
                if let Err(why) = p.element_ok(&host, r, tv, i, j, &mut stack) {
                    bad_t.push(p.in_product(b, why));
                }
            }
        }
        let settled = picked.len();
        let what = format!(
            "{} differs from {tcfg} at {} elements (whole-output comparison); of {settled} settled by the host reference",
            cfg, d.count
        );
        if !bad_c.is_empty() {
            return Verdict::Wrong(format!(
                "wrong result: {what}, this one is wrong at {}; first: {}",
                bad_c.len(),
                bad_c[..bad_c.len().min(3)].join("; ")
            ));
        }
        if !bad_t.is_empty() {
            self.trusted = None;
            self.pending = true;
            let why = format!(
                "wrong result: {what}, {tcfg} is wrong at {} and {cfg} right; first: {}",
                bad_t.len(),
                bad_t[..bad_t.len().min(3)].join("; ")
            );
            return Verdict::Pass {
                demoted: Some((t, why)),
            };
        }
        if crate::env::log() {
            eprintln!("crossgemm: {what}, both are right at all of them");
        }
        Verdict::Pass { demoted: None }
    }

    /// Times the candidate that just passed ([`measure::measure`], its verification run
    /// being the first warm-up), on the plan's operands.
    pub(crate) fn time(
        &self,
        cfg: &TileConfig,
        kern: &(dyn Any + Send + Sync),
        flush: Option<&RawBuffer>,
        limit_ms: f64,
        time_scale: f64,
    ) -> Result<Result<measure::Measured>> {
        self.with_call(|call, out| {
            let dims = cfg.launch(call.ir(), call.problem, call.machine());
            measure::measure(
                call.device(),
                kern,
                dims,
                &call.kernel_args(cfg, out),
                flush,
                limit_ms,
                time_scale,
            )
        })
    }

    /// Times candidates that passed together, in interleaved rounds
    /// ([`measure::interleaved`]), on the plan's operands: the tuner's final round.
    pub(crate) fn time_together(
        &self,
        kernels: &[(TileConfig, &(dyn Any + Send + Sync))],
        flush: Option<&RawBuffer>,
        rounds: usize,
    ) -> Result<Result<Vec<measure::Timed>>> {
        self.with_call(|call, out| {
            let runs: Vec<_> = kernels
                .iter()
                .map(|(cfg, kern)| {
                    let dims = cfg.launch(call.ir(), call.problem, call.machine());
                    (*kern, dims, call.kernel_args(cfg, out))
                })
                .collect();
            measure::interleaved(call.device(), &runs, flush, rounds)
        })
    }

    /// Makes the candidate that just passed (and was timed) the trusted result, if it is
    /// to be one (the first to pass, or the one that demoted the last).
    pub(crate) fn promote(&mut self, idx: usize, cfg: &TileConfig, fault: Fault) -> Result<()> {
        if !std::mem::take(&mut self.pending) {
            return Ok(());
        }
        if self.bufs.len() < 2 {
            return Ok(());
        }
        self.apply(fault, cfg)?;
        self.bufs.swap(0, 1);
        self.trusted = Some((idx, *cfg));
        Ok(())
    }

    /// Applies a test's fault to the candidate buffer.
    fn apply(&self, fault: Fault, cfg: &TileConfig) -> Result<()> {
        let buf = &self.bufs[0];
        let p = &self.plan;
        let cells: Vec<(usize, usize)> = match fault {
            Fault::None | Fault::OutOfMemory => return Ok(()),
            Fault::Fill(b) => return buf.fill(b),
            Fault::Element => vec![(p.m / 2, p.n / 2)],
            Fault::Tile(_) => {
                let (bm, bn) = cfg.block_mn();
                let (bm, bn) = ((bm as usize).min(p.m), (bn as usize).min(p.n));
                let (r0, c0) = ((p.m - bm) / 2, (p.n - bn) / 2);
                (r0..r0 + bm).flat_map(|i| (c0..c0 + bn).map(move |j| (i, j))).collect()
            }
        };
        let base = match fault {
            Fault::Tile(b) => b.min(p.batch - 1) * p.product_len(),
            _ => 0,
        };
        let dtype = p.ir.out_dtype;
        let mut vals = decode(dtype, &compare::download(buf)?);
        for (i, j) in cells {
            vals[base + p.index(i, j)] += 1.0;
        }
        buf.upload(&encode(dtype, &vals))
    }
}
