//! The checks every call's arguments pass before anything runs: devices and the access
//! a caller's memory allows, shapes, batches, views inside their buffers, and no output
//! that overlaps an operand (but a residual written over element for element).

use super::{dims, packed_extent, shape_err, view_end, Arg, OutArg};
use crate::device::RawBuffer;
use crate::error::{GemmError, Result};
use crate::spec::KernelSpec;
use gemm_core::{GemmIr, Layout, ParamKind, Stored};

/// Every check a call's arguments must pass whatever its batch: every operand on the
/// output's device, inner dimensions that agree, epilogue operands and the output of the
/// product's shape, batches that agree, views inside their buffers and extents inside the
/// kernels' 32-bit index range; `(M, N, K)`.
pub(crate) fn check(spec: &KernelSpec, args: &[Arg<'_>], out: &OutArg<'_>) -> Result<(usize, usize, usize)> {
    crate::env::validate_all();
    check_devices(spec, args, out)?;
    let (m, n, k) = dims(spec, args)?;
    if (out.rows, out.cols) != (m, n) {
        return Err(shape_err(
            spec,
            format!("the output is {}x{} but the product is {m}x{n}", out.rows, out.cols),
        ));
    }
    check_batch(spec, args, out)?;
    let views = placed(spec.ir(), args, out);
    check_bytes(spec, &views)?;
    check_aliasing(spec, &views)?;
    Ok((m, n, k))
}

/// Every operand holds one matrix (broadcast to every product) or as many as the output.
fn check_batch(spec: &KernelSpec, args: &[Arg<'_>], out: &OutArg<'_>) -> Result<()> {
    let ir = spec.ir();
    if out.batch == 0 {
        return Err(GemmError::Unsupported(
            "a batch of 0 products (a batched view holds at least one)".into(),
        ));
    }
    for (p, a) in ir.params.iter().zip(args) {
        if let Some((count, _)) = a.geometry() {
            if count != 1 && count != out.batch {
                return Err(shape_err(
                    spec,
                    if out.batch == 1 {
                        format!(
                            "`{}` holds a batch of {count} but the output one matrix: pass a batched output view (`_into`)",
                            p.name
                        )
                    } else {
                        format!(
                            "`{}` holds a batch of {count} but the output {}: an operand holds one (for every product) or the output's count",
                            p.name, out.batch
                        )
                    },
                ));
            }
        }
    }
    Ok(())
}

/// Every view lies inside its buffer (an untyped call may pass any buffer with any
/// shape and geometry) and no leading dimension is smaller than its view's contiguous
/// extent (rows would overlap) or past the kernels' 32-bit range: a kernel must never
/// read or write past a buffer.
fn check_bytes(spec: &KernelSpec, views: &[Placed<'_>]) -> Result<()> {
    for &Placed {
        what,
        buf,
        layout,
        rows,
        cols,
        at,
        batch,
        size,
        ..
    } in views
    {
        let have = buf.bytes;
        let inner = packed_extent(layout, rows, cols);
        if at.ld != 0 && at.ld < inner {
            return Err(shape_err(
                spec,
                format!(
                    "{what} has leading dimension {} but its {} hold {inner} elements each (a leading dimension at least the extent is needed)",
                    at.ld,
                    if layout == Layout::RowMajor { "rows" } else { "columns" }
                ),
            ));
        }
        if at.pitch(inner) > i32::MAX as usize {
            return Err(GemmError::Unsupported(format!(
                "{what}'s leading dimension {} exceeds the 32-bit index range of the kernels",
                at.pitch(inner)
            )));
        }
        let need = view_end(layout, rows, cols, at)
            .map(|e| if e == 0 { 0 } else { e + (batch as u128 - 1) * at.bstride as u128 } * size as u128);
        if need.is_none_or(|need| need > have as u128) {
            let need = need.map_or("more than 2^128".to_string(), |n| n.to_string());
            return Err(shape_err(
                spec,
                if at == Stored::default() && batch == 1 {
                    format!("{what} needs {need} bytes for its shape but its buffer holds {have}")
                } else if batch > 1 {
                    format!(
                        "{what} ({batch} of {rows}x{cols} from element {} with leading dimension {}, {} apart) reaches byte {need} but its buffer holds {have}",
                        at.offset,
                        at.pitch(inner),
                        at.bstride
                    )
                } else {
                    format!(
                        "{what} ({rows}x{cols} from element {} with leading dimension {}) reaches byte {need} but its buffer holds {have}",
                        at.offset,
                        at.pitch(inner)
                    )
                },
            ));
        }
    }
    Ok(())
}

/// A view of a call, output or operand, where it lies: the output first, then the
/// buffers in signature order (a vector as a one-row view).
struct Placed<'a> {
    what: &'a str,
    /// Its signature index (`None`: the output).
    param: Option<usize>,
    buf: &'a RawBuffer,
    layout: Layout,
    rows: usize,
    cols: usize,
    at: Stored,
    batch: usize,
    size: u32,
}

fn placed<'a>(ir: &'a GemmIr, args: &[Arg<'a>], out: &OutArg<'a>) -> Vec<Placed<'a>> {
    // Sized for the output and every operand at once: this runs on every launch.
    let mut each = Vec::with_capacity(1 + args.len());
    each.push(Placed {
        what: "the output",
        param: None,
        buf: out.buf,
        layout: ir.out_layout,
        rows: out.rows,
        cols: out.cols,
        at: out.at,
        batch: out.batch,
        size: ir.out_dtype.size(),
    });
    for (i, (p, a)) in ir.params.iter().zip(args).enumerate() {
        match (p.kind, *a) {
            (
                ParamKind::Matrix { dtype, layout },
                Arg::Matrix {
                    buf,
                    rows,
                    cols,
                    at,
                    batch,
                },
            ) => each.push(Placed {
                what: &p.name,
                param: Some(i),
                buf,
                layout,
                rows,
                cols,
                at,
                batch,
                size: dtype.size(),
            }),
            (ParamKind::Row { dtype } | ParamKind::Col { dtype }, Arg::Vector { buf, len, at, batch }) => {
                each.push(Placed {
                    what: &p.name,
                    param: Some(i),
                    buf,
                    layout: Layout::RowMajor,
                    rows: 1,
                    cols: len,
                    at: Stored::new(0, at.offset).with_bstride(at.bstride),
                    batch,
                    size: dtype.size(),
                })
            }
            _ => {}
        }
    }
    each
}

/// No operand shares memory with the output (`aliasing`): views of one caller's
/// allocation may, and the kernels do not compute in place, but for one case: a matrix
/// the epilogue adds (or otherwise reads elementwise) lying exactly where the output does,
/// element for element (`k_into_res`, the result written over `res`). Each output element
/// is written once, by a value computed from that same element of the operand, so the
/// read precedes the write in every kernel; A and B, whose elements feed many outputs,
/// and vectors, which feed a whole row or column, never may. Run after [`check_bytes`]
/// (the views lie inside their buffers).
fn check_aliasing(spec: &KernelSpec, views: &[Placed<'_>]) -> Result<()> {
    let (first, views) = views.split_first().expect("the output comes first");
    let backend = first.buf.device.backend();
    let Some((space, base)) = backend.memory_span(first.buf) else {
        return Ok(());
    };
    let runs = |v: &Placed<'_>, base: u64| {
        let inner = packed_extent(v.layout, v.rows, v.cols);
        let lines = (v.rows * v.cols).checked_div(inner).unwrap_or(0);
        let b = |elements: usize| elements as u64 * v.size as u64;
        crate::aliasing::Runs {
            start: base + b(v.at.offset),
            width: b(inner),
            lines: lines as u64,
            pitch: b(v.at.pitch(inner)),
            batches: v.batch as u64,
            bstride: b(v.at.bstride),
        }
    };
    let ir = spec.ir();
    let output = runs(first, base);
    // An operand the output may be: a matrix only the epilogue reads, element for element.
    let epilogue_matrix = |v: &Placed<'_>| {
        v.param.is_some_and(|i| {
            i != ir.a as usize && i != ir.b as usize && matches!(ir.params[i].kind, ParamKind::Matrix { .. })
        })
    };
    for v in views {
        let Some((_, b)) = backend.memory_span(v.buf).filter(|&(s, _)| s == space) else {
            continue;
        };
        let r = runs(v, b);
        let in_place = epilogue_matrix(v)
            && (v.layout, v.size, v.rows, v.cols) == (first.layout, first.size, first.rows, first.cols)
            && r == output;
        if crate::aliasing::overlap(&output, &r) && !in_place {
            return Err(GemmError::View(format!(
                "the output of `{}` shares memory with `{}`: the kernels do not compute in place (a block may read an element another has already written), so write the output to memory no operand uses{}",
                spec.name,
                v.what,
                if epilogue_matrix(v) {
                    " (or to exactly this operand's elements, as `_into_` its name does)"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

fn check_devices(spec: &KernelSpec, args: &[Arg<'_>], out: &OutArg<'_>) -> Result<()> {
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
        if !dev.backend().kernel_access(buf).0 {
            return Err(access_err(
                spec,
                &format!("`{}`", ir.params[i].name),
                "write-only",
                "reads",
            ));
        }
    }
    if !dev.backend().kernel_access(out.buf).1 {
        return Err(access_err(spec, "the output", "read-only", "writes"));
    }
    Ok(())
}

/// A caller's memory that kernels may not use as the call would (OpenCL's
/// `CL_MEM_READ_ONLY` / `CL_MEM_WRITE_ONLY`).
fn access_err(spec: &KernelSpec, what: &str, made: &str, does: &str) -> GemmError {
    GemmError::View(format!(
        "{what} of `{}` lies in memory made {made} for kernels (CL_MEM_{}), and the kernel {does} it",
        spec.name,
        made.replace('-', "_").to_uppercase()
    ))
}
