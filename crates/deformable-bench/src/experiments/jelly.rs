//! `jelly`: the jelly drop in rapier at one setting.

use super::{jelly_headline, print_jelly_run, print_jelly_scene};
use crate::cli::{JellyArgs, RapierArgs};
use crate::rapier_soft::RapierSoft;
use crate::run::run_jelly;

pub fn jelly(args: &JellyArgs, rapier: &RapierArgs) -> Result<(), String> {
    let scene = args.scene()?;
    let settings = rapier.settings()?;
    print_jelly_scene(&scene, args.jelly_step, args.jelly_duration);
    println!(
        "rapier: corotational cells, {} substeps, sleeping {}",
        settings.substeps,
        if settings.can_sleep { "on" } else { "off" }
    );
    let mut engine = RapierSoft::jelly(&scene, &settings);
    let run = run_jelly(&mut engine, &scene, args.jelly_step, args.jelly_duration)
        .map_err(|e| format!("jelly: {e}"))?;
    println!("  rapier: {}", run.timing.size);
    print_jelly_run("rapier", &run);
    jelly_headline("rapier", std::slice::from_ref(&run))
        .iter()
        .for_each(|l| println!("{l}"));
    Ok(())
}
