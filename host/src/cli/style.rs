//! The terminal's styles: the escape sequences for dim, red, green and bold text, all empty
//! when colour is off, so layout code never asks whether colour is on.

/// Styles, empty when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub dim: &'static str,
    pub red: &'static str,
    pub green: &'static str,
    pub bold: &'static str,
    pub reset: &'static str,
}

impl Style {
    pub fn new(color: bool) -> Self {
        if color {
            Style { dim: "\x1b[2m", red: "\x1b[31m", green: "\x1b[32m", bold: "\x1b[1m", reset: "\x1b[0m" }
        } else {
            Style { dim: "", red: "", green: "", bold: "", reset: "" }
        }
    }
}
