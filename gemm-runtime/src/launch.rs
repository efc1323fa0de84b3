//! From a typed call to a kernel launch: shape and device checks, target and config
//! choice, compile (cached per device), launch. The host device runs the reference.

use crate::device::{DeviceKind, KernelArg, RawBuffer};
use crate::element::Element;
use crate::error::{GemmError, Result};
use crate::reference::{self, HostOperand};
use crate::spec::{KernelSpec, TargetKernel};
use gemm_core::{Backend, DType, GemmIr, LaunchDims, ParamKind, TileConfig};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// What a warm call needs once its config is chosen and its kernel compiled. Resolving
/// that again on every call (tuning-cache lookup, `-D` strings, the compiled-kernel map,
/// the kernel symbol) costs several microseconds of allocation; a plan costs one lookup.
#[derive(Clone)]
struct LaunchPlan {
    kernel: Arc<dyn Any + Send + Sync>,
    dims: LaunchDims,
}

/// (kernel spec, device, M, N, K, tuning mode): the mode is part of the key so that a
/// process that changes `CROSSGEMM_TUNE` gets what that mode chooses.
type PlanKey = (usize, u64, usize, usize, usize, crate::tune::TuneMode);

fn plans() -> &'static RwLock<HashMap<PlanKey, LaunchPlan>> {
    static PLANS: OnceLock<RwLock<HashMap<PlanKey, LaunchPlan>>> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

/// Drops every resolved plan (after a tune may have changed a winner).
pub(crate) fn forget_plans() {
    plans().write().unwrap_or_else(|e| e.into_inner()).clear();
}

/// One argument of a generated wrapper, in signature order.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A matrix operand (`rows × cols` as stored).
    Matrix {
        buf: &'a RawBuffer,
        rows: usize,
        cols: usize,
    },
    /// A `Row` or `Col` vector.
    Vector { buf: &'a RawBuffer, len: usize },
    /// An f32 scalar.
    Scalar(f32),
}

/// The output matrix of a call.
#[derive(Clone, Copy, Debug)]
pub struct OutArg<'a> {
    /// Its memory.
    pub buf: &'a RawBuffer,
    /// Rows (M).
    pub rows: usize,
    /// Columns (N).
    pub cols: usize,
}

fn shape_err(spec: &KernelSpec, detail: String) -> GemmError {
    GemmError::Shape {
        kernel: spec.name.to_string(),
        detail,
    }
}

/// Checks every operand against the product and returns (M, N, K).
pub fn dims(spec: &KernelSpec, args: &[Arg<'_>]) -> Result<(usize, usize, usize)> {
    let ir = spec.ir();
    let shape = |idx: u32, t: bool| -> (usize, usize) {
        match args[idx as usize] {
            Arg::Matrix { rows, cols, .. } if t => (cols, rows),
            Arg::Matrix { rows, cols, .. } => (rows, cols),
            _ => unreachable!("the macro passes matrices for A and B"),
        }
    };
    let (m, k) = shape(ir.a, ir.a_t);
    let (k2, n) = shape(ir.b, ir.b_t);
    let name = |i: u32| ir.params[i as usize].name.as_str();
    let t = |b: bool| if b { ".t()" } else { "" };
    if k != k2 {
        return Err(shape_err(
            spec,
            format!(
                "`{}{}` is {m}x{k} but `{}{}` is {k2}x{n}: inner dimensions {k} and {k2} differ",
                name(ir.a),
                t(ir.a_t),
                name(ir.b),
                t(ir.b_t)
            ),
        ));
    }
    for (i, p) in ir.params.iter().enumerate() {
        if i as u32 == ir.a || i as u32 == ir.b {
            continue;
        }
        let bad = match (p.kind, args[i]) {
            (ParamKind::Matrix { .. }, Arg::Matrix { rows, cols, .. }) if (rows, cols) != (m, n) => {
                Some(format!("`{}` is {rows}x{cols} but the product is {m}x{n}", p.name))
            }
            (ParamKind::Row { .. }, Arg::Vector { len, .. }) if len != n => Some(format!(
                "`{}` (a Row, one value per column) has length {len} but the product has {n} columns",
                p.name
            )),
            (ParamKind::Col { .. }, Arg::Vector { len, .. }) if len != m => Some(format!(
                "`{}` (a Col, one value per row) has length {len} but the product has {m} rows",
                p.name
            )),
            _ => None,
        };
        if let Some(d) = bad {
            return Err(shape_err(spec, d));
        }
    }
    for (what, v) in [("M", m), ("N", n), ("K", k)] {
        if v > i32::MAX as usize {
            return Err(GemmError::Unsupported(format!(
                "{what} = {v} exceeds the 32-bit index range of the kernels"
            )));
        }
    }
    Ok((m, n, k))
}

pub(crate) fn check_out(spec: &KernelSpec, out: &OutArg<'_>, m: usize, n: usize) -> Result<()> {
    if (out.rows, out.cols) != (m, n) {
        return Err(shape_err(
            spec,
            format!("the output is {}x{} but the product is {m}x{n}", out.rows, out.cols),
        ));
    }
    Ok(())
}

pub(crate) fn check_devices(spec: &KernelSpec, args: &[Arg<'_>], out: &OutArg<'_>) -> Result<()> {
    let dev = &out.buf.device;
    let ir = spec.ir();
    for (i, a) in args.iter().enumerate() {
        let buf = match a {
            Arg::Matrix { buf, .. } | Arg::Vector { buf, .. } => buf,
            Arg::Scalar(_) => continue,
        };
        if buf.device != *dev {
            return Err(GemmError::DeviceMismatch {
                kernel: spec.name.into(),
                param: ir.params[i].name.clone(),
                found: buf.device.info().to_string(),
                expected: dev.info().to_string(),
            });
        }
    }
    Ok(())
}

/// Picks the planned target whose code runs on `device`.
pub(crate) fn target_for<'s>(spec: &'s KernelSpec, info: &crate::DeviceInfo) -> Result<&'s TargetKernel> {
    let pick = match info.kind {
        DeviceKind::Cuda => {
            let cc = info.compute_capability.unwrap_or(0);
            spec.targets
                .iter()
                .filter(|t| t.backend == Backend::Cuda && t.spec().compute_capability.unwrap_or(u32::MAX) <= cc)
                .max_by_key(|t| t.spec().compute_capability)
        }
        DeviceKind::Opencl => {
            let cl = || spec.targets.iter().filter(|t| t.backend == Backend::Opencl);
            cl().find(|t| t.spec().device_type == info.device_type)
                .or_else(|| cl().next())
        }
        DeviceKind::Host => None,
    };
    pick.ok_or_else(|| GemmError::NoTarget {
        kernel: spec.name.into(),
        device: info.to_string(),
        hint: format!(
            "planned targets: [{}]; enable a matching target with a cargo feature of crossgemm (`sm80`/`sm90` for CUDA, `opencl` for OpenCL)",
            spec.targets.iter().map(|t| t.target).collect::<Vec<_>>().join(", ")
        ),
    })
}

/// The planner's best config that fits the device's real limits.
pub(crate) fn default_config(tk: &TargetKernel, info: &crate::DeviceInfo, dtype: DType) -> Result<TileConfig> {
    tk.plan()
        .configs
        .iter()
        .copied()
        .find(|c| fits(c, info, dtype))
        .ok_or_else(|| {
            GemmError::Unsupported(format!(
                "no planned config of target `{}` fits {} ({} B shared memory, {} threads per block)",
                tk.target, info, info.smem_per_block, info.max_threads_per_block
            ))
        })
}

pub(crate) fn fits(c: &TileConfig, info: &crate::DeviceInfo, dtype: DType) -> bool {
    c.threads() <= info.max_threads_per_block && c.smem_bytes(dtype) <= info.smem_per_block
}

/// Runs the kernel with the default config for the operands' device.
pub fn launch(spec: &'static KernelSpec, args: &[Arg<'_>], out: OutArg<'_>) -> Result<()> {
    launch_impl(spec, None, args, out)
}

/// Runs the kernel with an explicit config (tests and tuning).
pub fn launch_with(spec: &'static KernelSpec, config: &TileConfig, args: &[Arg<'_>], out: OutArg<'_>) -> Result<()> {
    launch_impl(spec, Some(config), args, out)
}

fn launch_impl(
    spec: &'static KernelSpec,
    config: Option<&TileConfig>,
    args: &[Arg<'_>],
    out: OutArg<'_>,
) -> Result<()> {
    check_devices(spec, args, &out)?;
    let (m, n, k) = dims(spec, args)?;
    check_out(spec, &out, m, n)?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    let dev = &out.buf.device;
    let ir = spec.ir();
    if dev.info().kind == DeviceKind::Host {
        let vals = host_reference(ir, args, m, n, k)?;
        return out.buf.upload(&encode(ir.out_dtype, &vals));
    }
    let key: Option<PlanKey> = config.is_none().then(|| {
        (
            spec as *const KernelSpec as usize,
            dev.serial(),
            m,
            n,
            k,
            crate::tune::TuneMode::from_env(),
        )
    });
    if let Some(key) = &key {
        let plan = plans().read().unwrap_or_else(|e| e.into_inner()).get(key).cloned();
        if let Some(p) = plan {
            return dev
                .backend()
                .launch(&*p.kernel, p.dims, &kernel_args(args, out.buf, (m, n, k)));
        }
    }
    let tk = target_for(spec, dev.info())?;
    let cfg = match config {
        Some(c) => {
            if !fits(c, dev.info(), ir.ab_dtype) {
                return Err(GemmError::Unsupported(format!(
                    "config {c} does not fit {}",
                    dev.info()
                )));
            }
            *c
        }
        None => crate::tune::choose(spec, tk, args, &out, (m, n, k))?,
    };
    let kernel = dev.kernel(tk.source, &ir.symbol(), &all_defines(ir, tk, &cfg, (m, n, k)))?;
    let dims = cfg.launch(m, n, ir.ab_dtype);
    if let Some(key) = key {
        let plan = LaunchPlan {
            kernel: kernel.clone(),
            dims,
        };
        plans().write().unwrap_or_else(|e| e.into_inner()).insert(key, plan);
    }
    dev.backend()
        .launch(&*kernel, dims, &kernel_args(args, out.buf, (m, n, k)))
}

/// The `-D` constants of one compile: the tile, and for CUDA the shape's alignment.
pub(crate) fn all_defines(
    ir: &GemmIr,
    tk: &TargetKernel,
    cfg: &TileConfig,
    (m, n, k): (usize, usize, usize),
) -> Vec<(String, u32)> {
    let mut defines: Vec<(String, u32)> = cfg.defines().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    if tk.backend == Backend::Cuda {
        defines.extend(
            gemm_core::codegen::cuda::shape_defines(ir, m, n, k)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
    }
    defines
}

/// The kernel ABI: (M, N, K, out, params in signature order).
pub(crate) fn kernel_args<'a>(
    args: &[Arg<'a>],
    out: &'a RawBuffer,
    (m, n, k): (usize, usize, usize),
) -> Vec<KernelArg<'a>> {
    let mut kargs = vec![
        KernelArg::Int(m as i32),
        KernelArg::Int(n as i32),
        KernelArg::Int(k as i32),
        KernelArg::Buffer(out),
    ];
    for a in args {
        kargs.push(match *a {
            Arg::Matrix { buf, .. } | Arg::Vector { buf, .. } => KernelArg::Buffer(buf),
            Arg::Scalar(s) => KernelArg::Float(s),
        });
    }
    kargs
}

pub(crate) fn decode(dtype: DType, bytes: &[u8]) -> Vec<f32> {
    match dtype {
        DType::F32 => bytemuck::cast_slice::<u8, f32>(bytes).to_vec(),
        DType::F16 => bytes
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        DType::Bf16 => bytes
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
    }
}

pub(crate) fn encode(dtype: DType, vals: &[f32]) -> Vec<u8> {
    match dtype {
        DType::F32 => bytemuck::cast_slice(vals).to_vec(),
        DType::F16 => vals
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
            .collect(),
        DType::Bf16 => vals
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
            .collect(),
    }
}

/// Downloads the operands and evaluates the reference (f32 values, output layout).
fn host_reference(ir: &GemmIr, args: &[Arg<'_>], m: usize, n: usize, k: usize) -> Result<Vec<f32>> {
    let data = download_operands(ir, args)?;
    Ok(reference::gemm(ir, &host_operands(ir, args, &data), m, n, k))
}

/// Every buffer operand, widened to f32 (scalars get an empty vector).
pub(crate) fn download_operands(ir: &GemmIr, args: &[Arg<'_>]) -> Result<Vec<Vec<f32>>> {
    let mut data: Vec<Vec<f32>> = Vec::with_capacity(args.len());
    for (p, a) in ir.params.iter().zip(args) {
        data.push(match (p.kind, a) {
            (
                ParamKind::Matrix { dtype, .. } | ParamKind::Row { dtype } | ParamKind::Col { dtype },
                Arg::Matrix { buf, .. } | Arg::Vector { buf, .. },
            ) => {
                let mut bytes = vec![0u8; buf.bytes];
                buf.download(&mut bytes)?;
                decode(dtype, &bytes)
            }
            _ => Vec::new(),
        });
    }
    Ok(data)
}

/// The operands as the host reference takes them, over `data` from [`download_operands`].
pub(crate) fn host_operands<'d>(ir: &GemmIr, args: &[Arg<'_>], data: &'d [Vec<f32>]) -> Vec<HostOperand<'d>> {
    ir.params
        .iter()
        .zip(args)
        .zip(data)
        .map(|((p, a), d)| match (p.kind, *a) {
            (ParamKind::Matrix { layout, .. }, Arg::Matrix { rows, cols, .. }) => HostOperand::Matrix {
                data: d,
                rows,
                cols,
                layout,
            },
            (_, Arg::Scalar(s)) => HostOperand::Scalar(s),
            _ => HostOperand::Vector(d),
        })
        .collect()
}

/// The host reference for a call, rounded to the output type, in the output layout.
pub fn reference<T: Element>(spec: &'static KernelSpec, args: &[Arg<'_>]) -> Result<Vec<T>> {
    let (m, n, k) = dims(spec, args)?;
    let vals = host_reference(spec.ir(), args, m, n, k)?;
    Ok(vals.into_iter().map(T::from_f32).collect())
}
