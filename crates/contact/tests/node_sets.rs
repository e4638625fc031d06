//! A node set (`EnvironmentGeometry::Nodes`): points set while running,
//! each looked up in the tool's field (role B), as a deformable's surface
//! near the tool is.

use haptic_contact::{
    ContactScene, EnvironmentGeometry, EnvironmentObject, PenaltyParameters, Role,
    StiffnessScaling, ToolGeometry,
};
use haptic_pointshell::TraversalBudget;
use haptic_testkit::fields::SphereField;
use nalgebra::{Isometry3, Point3, Translation3, Vector3};
use std::sync::Arc;

const RADIUS: f64 = 0.02;

/// The tool a sphere of [`RADIUS`] about its origin, against a node set of
/// `capacity` slots.
fn scene(capacity: usize) -> ContactScene {
    let tool = ToolGeometry {
        shell: None,
        field: Some(Arc::new(SphereField {
            center: Point3::origin(),
            radius: RADIUS,
        })),
    };
    let nodes = EnvironmentObject {
        pose: Isometry3::identity(),
        geometry: EnvironmentGeometry::Nodes { capacity },
        friction_coefficient: 0.3,
    };
    let parameters = PenaltyParameters {
        stiffness: 100.0,
        scaling: StiffnessScaling::NONE,
        direction: Default::default(),
    };
    ContactScene::new(tool, vec![nodes], parameters).unwrap()
}

fn up() -> Vector3<f64> {
    Vector3::z()
}

#[test]
fn every_point_inside_the_tool_is_a_contact_at_its_depth() {
    let mut scene = scene(8);
    assert_eq!(scene.max_contacts(), 8);
    let points = [
        Point3::new(0.0, 0.0, -0.015),
        Point3::new(0.005, 0.0, -0.018),
        Point3::new(0.0, 0.0, -0.025),
        Point3::new(f64::NAN, 0.0, 0.0),
        Point3::new(0.03, 0.0, 0.0),
    ];
    let moved = scene.set_nodes(0, &points, &[up(); 5], &[0, 1, 2, 3, 4]);
    assert_eq!(moved, Some(Vector3::zeros()), "nothing was there before");
    let pose = Isometry3::from_parts(Translation3::new(0.0, 0.0, 0.001), Default::default());
    scene.evaluate(&pose, TraversalBudget::default());
    let mut found: Vec<_> = scene
        .contacts()
        .iter()
        .map(|c| (c.point, c.distance, c.role, c.normal))
        .collect();
    found.sort_by_key(|c| c.0);
    assert_eq!(found.len(), 2, "{found:?}");
    for (slot, distance, role, normal) in found {
        let p = points[slot as usize] - pose.translation.vector;
        assert!((distance - (p.coords.norm() - RADIUS)).abs() < 1e-12);
        assert!(distance < 0.0);
        assert_eq!(role, Role::MovingField);
        assert_eq!(normal, up());
    }
    // The tool pushed up, the nodes down.
    assert!(scene.contacts().iter().all(|c| c.force().z > 0.0));
}

#[test]
fn a_refill_reports_how_far_the_touched_points_moved() {
    let mut scene = scene(4);
    let points = [
        Point3::new(0.0, 0.0, -0.019),
        Point3::new(0.0, 0.0, -0.016),
        Point3::new(0.05, 0.0, 0.0),
    ];
    scene.set_nodes(0, &points, &[up(); 3], &[7, 8, 9]);
    scene.evaluate(&Isometry3::identity(), TraversalBudget::default());
    assert_eq!(scene.contacts().len(), 2);
    // Slot 0 moves 0.5 mm down (depth 1 mm), slot 1 2 mm down (depth 4 mm),
    // slot 2 far away (not touched), and a slot now holding another point
    // counts for nothing.
    let next = [
        Point3::new(0.0, 0.0, -0.0195),
        Point3::new(0.0, 0.0, -0.018),
        Point3::new(0.06, 0.0, 0.0),
        Point3::new(0.0, 0.0, -0.01),
    ];
    let moved = scene
        .set_nodes(0, &next, &[up(); 4], &[7, 8, 9, 10])
        .unwrap();
    let expected = (0.001 * -0.0005 + 0.004 * -0.002) / 0.005;
    assert!((moved.z - expected).abs() < 1e-12, "{moved:?}");
    assert_eq!((moved.x, moved.y), (0.0, 0.0));
    // Another id in slot 1: only slot 0 counts now.
    let moved = scene
        .set_nodes(0, &next, &[up(); 4], &[7, 11, 9, 10])
        .unwrap();
    assert_eq!(moved, Vector3::zeros(), "the points stayed");
    // Fewer points empty the slots beyond them.
    scene.set_nodes(0, &next[..1], &[up()], &[7]);
    scene.evaluate(&Isometry3::identity(), TraversalBudget::default());
    assert_eq!(scene.contacts().len(), 1);
    assert_eq!(scene.contacts()[0].point, 0);
}
