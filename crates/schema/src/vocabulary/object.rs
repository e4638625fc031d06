//! What a scene object is to contact.

closed_set! {
    /// What an object contributes to contact (Xu, Zhao & Barbič §4.1).
    pub enum ObjectRole {
        /// Its point shell: the tool's shell in static fields, or a static
        /// shell in the tool's field.
        PointShell = "point_shell",
        /// Its distance field.
        Field = "field",
        /// Both, each against the other object's counterpart.
        Both = "both",
    }
}

impl ObjectRole {
    pub fn has_shell(self) -> bool {
        matches!(self, Self::PointShell | Self::Both)
    }

    pub fn has_field(self) -> bool {
        matches!(self, Self::Field | Self::Both)
    }
}
