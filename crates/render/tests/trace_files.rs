//! A trace writes one CSV line and one JSON object per cycle.

use haptic_scenarios::{run, slide};

#[test]
fn csv_and_json_hold_every_cycle() {
    let trace = run(&slide(0.3)).unwrap();
    let dir = std::env::temp_dir().join(format!("haptic-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, json) = (dir.join("slide.csv"), dir.join("slide.json"));
    trace.write_csv(&csv).unwrap();
    trace.write_json(&json).unwrap();
    let csv = std::fs::read_to_string(csv).unwrap();
    let json = std::fs::read_to_string(json).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(csv.lines().count(), trace.rows.len() + 1);
    assert!(csv.lines().nth(1).unwrap().split(',').count() == 34);
    assert_eq!(json.matches("\"cycle\"").count(), trace.rows.len());
    assert!(json.contains("\"state\": \"sliding\""));
}
