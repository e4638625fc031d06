//! The Fig. 3 cloth falling on a fixed ball: its constraint counts, its
//! stretch and penetration once draped, at the default settings.

use haptic_deformable::scenes::{cloth, fig3_rigid_world, ClothSpec};
use haptic_deformable::{CoupledWorld, SolverParameters};
use nalgebra::{Isometry3, Translation3, UnitQuaternion};

#[test]
fn the_draped_cloth_holds_its_edges_and_stays_out_of_the_ball() {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.35),
        UnitQuaternion::identity(),
    );
    let (body, sheet) = cloth("cloth", &ClothSpec::default(), &pose).unwrap();
    let mut world = CoupledWorld::new(
        fig3_rigid_world(),
        vec![body],
        vec![],
        SolverParameters {
            // The cloth's rows hold it; its weak shear springs pass nothing on.
            elastic_passes: 1,
            ..SolverParameters::default()
        },
    )
    .unwrap();
    let (mut peak_rows, mut resting_strain, mut resting_penetration, mut contacts) =
        (0, 0.0f64, 0.0f64, 0);
    for step in 0..150 {
        let report = world.step(0.02);
        assert_eq!(report.quarantined, 0);
        peak_rows = peak_rows.max(report.rows);
        contacts = report.contacts;
        if step >= 100 {
            resting_strain = resting_strain.max(world.bodies()[0].max_strain(&sheet.structural));
            resting_penetration = resting_penetration.max(report.max_penetration);
        }
    }
    let centre = world.bodies()[0].centre_of_mass();
    println!(
        "peak rows {peak_rows}; {contacts} contacts at the end; draped (2–3 s): strain {resting_strain:.4}, penetration {resting_penetration:.4} m, centre z {:.3} m",
        centre.z
    );
    // 5,100 inextensibility and 7,400 bending rows, plus contacts.
    assert!(peak_rows > 12_500, "{peak_rows}");
    // Draped over the ball, not fallen off it.
    assert!(
        contacts > 1000 && centre.z.abs() < 0.25,
        "{contacts} contacts, centre z {}",
        centre.z
    );
    // Inextensible: no edge stretched by more than 1 % (0.21 % at worst
    // over the third second).
    assert!(resting_strain < 0.01, "{resting_strain}");
    assert!(resting_penetration < 0.003, "{resting_penetration}");
}
