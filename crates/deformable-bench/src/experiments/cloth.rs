//! `cloth`: the cloth over the ball in rapier at one setting.

use super::{cloth_headline, print_cloth_run, print_cloth_scene};
use crate::cli::{ClothArgs, RapierArgs};
use crate::rapier_soft::RapierSoft;
use crate::run::run_cloth;

pub fn cloth(args: &ClothArgs, rapier: &RapierArgs) -> Result<(), String> {
    let scene = args.scene()?;
    let settings = rapier.settings()?;
    print_cloth_scene(&scene, args.step, args.cloth_duration);
    println!("rapier: {}", settings.describe());
    let mut engine = RapierSoft::cloth(&scene, &settings).map_err(|e| format!("cloth: {e}"))?;
    let run = run_cloth(&mut engine, &scene, args.step, args.cloth_duration)
        .map_err(|e| format!("cloth: {e}"))?;
    println!("  rapier: {}", run.timing.size);
    print_cloth_run("rapier", &run);
    cloth_headline("rapier", std::slice::from_ref(&run))
        .iter()
        .for_each(|l| println!("{l}"));
    Ok(())
}
