use std::fmt;
use std::str::FromStr;

/// The length unit a mesh file's coordinates are written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LengthUnit {
    #[default]
    Metre,
    Centimetre,
    Millimetre,
    Inch,
}

impl LengthUnit {
    /// How many metres one of this unit is.
    pub fn metres(self) -> f64 {
        match self {
            LengthUnit::Metre => 1.0,
            LengthUnit::Centimetre => 0.01,
            LengthUnit::Millimetre => 0.001,
            LengthUnit::Inch => 0.0254,
        }
    }

    /// The unit's symbol: `m`, `cm`, `mm` or `in`.
    fn symbol(self) -> &'static str {
        match self {
            LengthUnit::Metre => "m",
            LengthUnit::Centimetre => "cm",
            LengthUnit::Millimetre => "mm",
            LengthUnit::Inch => "in",
        }
    }
}

impl fmt::Display for LengthUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A string that names no [`LengthUnit`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown length unit {input:?}: expected m, cm, mm, in or metre, centimetre, millimetre, inch"
)]
pub struct ParseLengthUnitError {
    pub input: String,
}

impl FromStr for LengthUnit {
    type Err = ParseLengthUnitError;

    /// Accepts symbols and names, case-insensitively, in British or American
    /// spelling, singular or plural: `mm`, `millimetre`, `Millimeters`, `in`, `inches`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        match input.trim().to_ascii_lowercase().as_str() {
            "m" | "metre" | "metres" | "meter" | "meters" => Ok(LengthUnit::Metre),
            "cm" | "centimetre" | "centimetres" | "centimeter" | "centimeters" => {
                Ok(LengthUnit::Centimetre)
            }
            "mm" | "millimetre" | "millimetres" | "millimeter" | "millimeters" => {
                Ok(LengthUnit::Millimetre)
            }
            "in" | "inch" | "inches" => Ok(LengthUnit::Inch),
            _ => Err(ParseLengthUnitError {
                input: input.to_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_and_names_parse_to_units() {
        for (text, unit) in [
            ("m", LengthUnit::Metre),
            ("metre", LengthUnit::Metre),
            ("Meters", LengthUnit::Metre),
            ("cm", LengthUnit::Centimetre),
            ("centimetre", LengthUnit::Centimetre),
            ("mm", LengthUnit::Millimetre),
            (" MILLIMETER ", LengthUnit::Millimetre),
            ("in", LengthUnit::Inch),
            ("inch", LengthUnit::Inch),
            ("inches", LengthUnit::Inch),
        ] {
            assert_eq!(text.parse::<LengthUnit>(), Ok(unit), "{text:?}");
        }
        for unit in [
            LengthUnit::Metre,
            LengthUnit::Centimetre,
            LengthUnit::Millimetre,
            LengthUnit::Inch,
        ] {
            assert_eq!(unit.to_string().parse::<LengthUnit>(), Ok(unit));
        }
    }

    #[test]
    fn unknown_unit_names_the_input_and_the_choices() {
        let error = "furlong".parse::<LengthUnit>().unwrap_err();
        assert_eq!(error.input, "furlong");
        let message = error.to_string();
        assert!(
            message.contains("\"furlong\"") && message.contains("mm"),
            "{message}"
        );
        assert!("".parse::<LengthUnit>().is_err());
        assert!("ms".parse::<LengthUnit>().is_err());
    }
}
