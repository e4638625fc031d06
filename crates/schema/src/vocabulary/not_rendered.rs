//! A tick's friction state or verdict, or that the tick rendered nothing.

use serde::de::{Deserialize, Deserializer, IntoDeserializer};
use serde::ser::{Serialize, Serializer};
use std::borrow::Cow;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::ToSchema;

/// The wire name of a tick that rendered nothing.
pub const NOT_RENDERED: &str = "not_rendered";

/// A value of the closed set `T` (a friction state or verdict), or
/// `not_rendered` for a tick that rendered nothing (its device read
/// failed). On the wire, `T`'s name or `not_rendered`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OrNotRendered<T> {
    Rendered(T),
    NotRendered,
}

impl<T> From<Option<T>> for OrNotRendered<T> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::NotRendered, Self::Rendered)
    }
}

impl<T> Default for OrNotRendered<T> {
    fn default() -> Self {
        Self::NotRendered
    }
}

impl<T: std::fmt::Display> std::fmt::Display for OrNotRendered<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rendered(value) => value.fmt(f),
            Self::NotRendered => f.pad(NOT_RENDERED),
        }
    }
}

impl<T: Serialize> Serialize for OrNotRendered<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Rendered(value) => value.serialize(serializer),
            Self::NotRendered => serializer.serialize_str(NOT_RENDERED),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrNotRendered<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if name == NOT_RENDERED {
            return Ok(Self::NotRendered);
        }
        T::deserialize(name.into_deserializer()).map(Self::Rendered)
    }
}

/// The component `OrNotRendered_T` (utoipa appends the generic's name),
/// inlined where a schema must be (a map's `propertyNames`).
impl<T: ToSchema> ToSchema for OrNotRendered<T> {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OrNotRendered")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((T::name().into_owned(), T::schema()));
        T::schemas(schemas);
    }
}

/// `oneOf`: a reference to `T`, or the string `not_rendered` (utoipa asks a
/// generic type through `ComposeSchema`, and derives its `PartialSchema`
/// from it).
impl<T: ToSchema> utoipa::__dev::ComposeSchema for OrNotRendered<T> {
    fn compose(_generics: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        let not_rendered = ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([NOT_RENDERED]))
            .description(Some("the tick rendered nothing: its device read failed"));
        OneOfBuilder::new()
            .item(Ref::from_schema_name(T::name()))
            .item(not_rendered)
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FrictionVerdict;

    #[test]
    fn a_value_or_not_rendered_goes_by_its_name_both_ways() {
        let values = [
            OrNotRendered::Rendered(FrictionVerdict::StaticInBand),
            OrNotRendered::NotRendered,
        ];
        let text = serde_json::to_string(&values).unwrap();
        assert_eq!(text, r#"["static_in_band","not_rendered"]"#);
        let back: Vec<OrNotRendered<FrictionVerdict>> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, values);
        assert!(serde_json::from_str::<OrNotRendered<FrictionVerdict>>(r#""stuck""#).is_err());
        assert_eq!(format!("{:<14}|", values[1]), "not_rendered  |");
    }
}
