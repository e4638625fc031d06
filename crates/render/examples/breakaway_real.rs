use haptic_mesh::{load_mesh, LoadOptions};
use haptic_render::breakaway::{Breakaway, FlatBed, FlatTool, ToolRole};
use haptic_render::FrictionModel;

fn main() {
    let dir = std::path::PathBuf::from(std::env::var("HOME").unwrap())
        .join(".cache/hapticd/test-data/meshes");
    let args: Vec<String> = std::env::args().collect();
    let scale: f64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(1.0);
    let mesh = load_mesh(
        &dir.join(&args[1]),
        &LoadOptions {
            scale,
            ..LoadOptions::default()
        },
    )
    .unwrap()
    .mesh;
    let tool = FlatTool::new(&args[1], &mesh, 0.37);
    let ps = FrictionModel::PreSliding { displacement: 5e-6 };
    for role in [ToolRole::Shell, ToolRole::Field] {
        let bed = FlatBed::new(tool.clone(), role);
        for model in [
            ps,
            FrictionModel::StaticLp,
            FrictionModel::YamaneSprings { stiffness: 200.0 },
        ] {
            for frac in [0.1, 0.5, 0.9] {
                let t = std::time::Instant::now();
                let h = bed.hold(0.5, 0.3, frac, model, 10, 0.05 * 0.5 * 2.5);
                println!("  {:?} {:?} frac={frac} commanded {:.4} held {:.4} creep {:.2e} m {:.2e} rad drift {:.2e} N not_static {} ({:.1}s)", role, model, h.commanded, h.held, h.creep, h.creep_rotation, h.force_drift, h.not_static, t.elapsed().as_secs_f64());
            }
            let b = Breakaway {
                mu: 0.5,
                direction: 0.3,
                friction: model,
                ramp_ratio: 0.8,
                ramp_cycles: 1500,
            };
            let r = bed.breakaway(&b);
            println!(
                "  {:?} {:?} breakaway/mu {:.4} moved {:.2e}",
                role,
                model,
                r.peak_ratio / 0.5,
                r.moved
            );
        }
    }
}
