//! `crossgemm devices`.

use super::CliResult;
use crossgemm::{Device, DeviceInfo};
use serde_json::json;

fn to_json(i: &DeviceInfo) -> serde_json::Value {
    json!({
        "id": i.id,
        "kind": format!("{:?}", i.kind).to_lowercase(),
        "name": i.name,
        "platform": i.platform,
        "driver": i.driver,
        "device_type": format!("{:?}", i.device_type).to_lowercase(),
        "compute_capability": i.compute_capability,
        "compute_units": i.compute_units,
        "smem_per_block": i.smem_per_block,
        "max_threads_per_block": i.max_threads_per_block,
        "global_mem_bytes": i.global_mem_bytes,
    })
}

pub fn run(json: bool) -> CliResult {
    let list = Device::list();
    let best = Device::best().ok().map(|d| d.info().id.clone());
    if json {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|d| {
                let mut j = to_json(d.info());
                j["best"] = json!(Some(&d.info().id) == best.as_ref());
                j
            })
            .collect();
        println!("{}", serde_json::Value::Array(v));
        return Ok(());
    }
    for d in &list {
        let i = d.info();
        let mark = if Some(&i.id) == best.as_ref() { " (best)" } else { "" };
        println!("{}{mark}: {}", i.id, i.name);
        println!("    platform {}, driver {}, {:?}", i.platform, i.driver, i.device_type);
        if let Some(cc) = i.compute_capability {
            println!("    compute capability {}.{}", cc / 10, cc % 10);
        }
        println!(
            "    {} compute units, {} threads/block, {} KiB shared memory/block, {:.1} GiB memory",
            i.compute_units,
            i.max_threads_per_block,
            i.smem_per_block / 1024,
            i.global_mem_bytes as f64 / (1u64 << 30) as f64
        );
    }
    Ok(())
}
