use haptic_mesh::shapes::{box_mesh, cylinder};
use haptic_render::breakaway::{Breakaway, FlatTool, ToolRole};
use haptic_render::FrictionModel;
use nalgebra::Vector3;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = match args.get(1).map(String::as_str) {
        Some("lp") => FrictionModel::StaticLp,
        Some("yamane") => FrictionModel::YamaneSprings { stiffness: 200.0 },
        _ => FrictionModel::PreSliding { displacement: 5e-6 },
    };
    let tools = [
        FlatTool::new("box", &box_mesh(Vector3::new(0.02, 0.02, 0.0145)), 0.37),
        FlatTool::new("cylinder", &cylinder(0.015, 0.03, 48), 0.37),
    ];
    for tool in &tools {
        for role in [ToolRole::Shell, ToolRole::Field] {
            for mu in [0.1, 0.5, 1.0, 2.0] {
                for deg in [0.0f64, 30.0, 45.0] {
                    let dir = deg.to_radians();
                    let b = Breakaway {
                        role,
                        mu,
                        direction: dir,
                        friction: model,
                        ramp_ratio: 1.5 * mu.min(tool.tipping_ratio(dir) * 1.2) + 0.05,
                        ramp_cycles: 1500,
                    };
                    let t = std::time::Instant::now();
                    let r = b.run(tool);
                    println!("{} {:?} mu={mu} dir={deg} tip={:.3} peak/mu={:.4} slid={} tipped={} contacts={} ({:.1}s)", tool.name, role, tool.tipping_ratio(dir), r.peak_ratio / mu, r.slid, r.tipped, r.contacts, t.elapsed().as_secs_f64());
                }
            }
        }
    }
}
