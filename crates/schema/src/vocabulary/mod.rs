//! The closed sets of names the engine and the protocol share: each a
//! fieldless enum with one stable snake_case wire name per value, for
//! serde and OpenAPI alike, defined once here and re-exported by the
//! engine crate that owns its concept.

/// Declares a closed set of names: a fieldless enum with the given wire
/// name per value (its serde and OpenAPI form), `ALL` its values in
/// declaration order, `name()` a value's wire name, and `Display` that
/// writes (and pads) it.
macro_rules! closed_set {
    (
        $(#[$attribute:meta])*
        pub enum $name:ident {
            $($(#[$value_attribute:meta])* $value:ident = $wire:tt,)+
        }
    ) => {
        $(#[$attribute])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash,
            ::serde::Serialize, ::serde::Deserialize, ::utoipa::ToSchema,
        )]
        pub enum $name {
            $($(#[$value_attribute])* #[serde(rename = $wire)] $value,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [Self; [$($wire),+].len()] = [$(Self::$value),+];

            /// The value's wire name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$value => $wire,)+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.name())
            }
        }
    };
}

mod friction;
mod not_rendered;
mod object;
mod safety;

pub use friction::{FrictionState, FrictionVerdict};
pub use not_rendered::{OrNotRendered, NOT_RENDERED};
pub use object::ObjectRole;
pub use safety::{SafetyState, TripCause};
