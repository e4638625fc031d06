use haptic_mesh::{load_mesh, LoadOptions};
use haptic_render::breakaway::{Breakaway, FlatTool, ToolRole};
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
    let ext = tool.mesh.aabb().extents();
    println!(
        "{}: {} tri, extents {:.4} {:.4} {:.4}, h {:.4}, face pts {}, mass {:.4}",
        args[1],
        mesh.triangles.len(),
        ext.x,
        ext.y,
        ext.z,
        tool.height,
        tool.face.len(),
        tool.mass.mass
    );
    for role in [ToolRole::Shell, ToolRole::Field] {
        for mu in [0.1, 0.5, 2.0] {
            for deg in [0.0f64, 30.0, 45.0] {
                let d = deg.to_radians();
                let b = Breakaway {
                    role,
                    mu,
                    direction: d,
                    friction: FrictionModel::PreSliding { displacement: 5e-6 },
                    ramp_ratio: 1.5 * mu.min(tool.tipping_ratio(d) * 1.2) + 0.05,
                    ramp_cycles: 1500,
                };
                let t = std::time::Instant::now();
                let r = b.run(&tool);
                println!("  {:?} mu={mu} dir={deg} tip={:.3} peak/mu={:.4} slid={} tipped={} moved={:.2e} tilt={:.2e} contacts={} ({:.1}s)", role, tool.tipping_ratio(d), r.peak_ratio / mu, r.slid, r.tipped, r.moved, r.tilt_at_peak, r.contacts, t.elapsed().as_secs_f64());
            }
        }
    }
}
