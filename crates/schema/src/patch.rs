//! Run-time changes to the rendering parameters: a partial of the config
//! file's `[materials]` and `[rendering]`, with the file's field names,
//! as the control API takes them.

use crate::rendering::{
    ForceDirection, Friction, GradientModel, Material, Rendering, SolverChoice,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The rendering parameters a run may change, in force: every material the
/// scene has (`[materials]`, and `default` when an object uses it without a
/// table) and `[rendering]`, with the config file's names and units.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct TunableParameters {
    pub materials: BTreeMap<String, Material>,
    pub rendering: Rendering,
}

/// Some of the [`TunableParameters`]: each field left out keeps its value.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderingPatch {
    /// By material name; only materials the scene has.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub materials: BTreeMap<String, MaterialPatch>,
    #[serde(default)]
    pub rendering: RenderingFieldsPatch,
}

/// Some fields of a `[materials.NAME]` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MaterialPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction_coefficient: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_stiffness_n_per_m: Option<f64>,
}

/// Declares the patch of `[rendering]`, one optional field per field of
/// [`Rendering`], and how it applies.
macro_rules! rendering_fields_patch {
    ($($(#[$attribute:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// Some fields of `[rendering]`.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct RenderingFieldsPatch {
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                $(#[$attribute])*
                pub $field: Option<$ty>,
            )*
        }

        impl RenderingFieldsPatch {
            /// Sets each field given.
            pub fn apply(&self, rendering: &mut Rendering) {
                $(
                    if let Some(value) = self.$field {
                        rendering.$field = value;
                    }
                )*
            }
        }
    };
}

rendering_fields_patch! {
    coupling_stiffness_n_per_m: f64,
    coupling_torsional_stiffness_n_m_per_rad: f64,
    static_damping: f64,
    // The range validation accepts (haptic-config's MAX_PYRAMID_SIDES), in
    // the schema too:
    // a schema-valid integer must fit the field.
    #[schema(minimum = 3, maximum = 32)]
    pyramid_sides: usize,
    stiffness_scaling_contacts: f64,
    anti_stickiness: bool,
    gradient: GradientModel,
    force_direction: ForceDirection,
    friction: Friction,
    pre_sliding_displacement_m: f64,
    friction_spring_stiffness_n_per_m: f64,
    solver: SolverChoice,
    cycle_budget_us: f64,
    collision_budget_share: f64,
}
